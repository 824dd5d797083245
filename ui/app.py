"""A minimal chat over the pipeline: sources appear first, the answer streams, cited papers follow."""

from __future__ import annotations

import html
from collections.abc import Iterator

import gradio as gr

from rag.answer import Answer
from rag.errors import PaperChatError
from rag.pipeline import DoneEvent, Pipeline, SourcesEvent, TokenEvent
from rag.retrieve import Source

# System fonts only: a Google font would make the browser reach the internet.
THEME = gr.themes.Default(font=["ui-sans-serif", "system-ui", "sans-serif"],
                          font_mono=["ui-monospace", "monospace"])
EXAMPLES = ["What is DroPE and why does it extend context?", "有没有关于KV缓存压缩的论文？"]


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def sources_markdown(sources: list[Source]) -> str:
    lines = [f"{s.n}. [{_esc(s.paper.title)}]({s.paper.link}) · {_esc(s.paper.status or 'status unknown')}" for s in sources]
    return "**Reading these papers:**\n\n" + "\n".join(lines)


def references_markdown(answer: Answer) -> str:
    if not answer.citations:
        return "_No paper was cited._"
    lines = [f"[{c.n}] [{_esc(c.title)}]({c.url}) · {_esc(c.status or 'status unknown')}" for c in answer.citations]
    return "**References**\n\n" + "\n\n".join(lines)


def respond(pipeline: Pipeline, message: str, chat: list[dict], turns: list[tuple[str, str]]) -> Iterator[tuple]:
    """One chat turn: yields (chat messages, turns) as the answer grows."""
    question = (message or "").strip()
    if not question:
        yield chat, turns
        return
    chat = chat + [{"role": "user", "content": _esc(question)}, {"role": "assistant", "content": "_Searching..._"}]
    yield list(chat), turns
    sources_md, text = "", ""
    try:
        for event in pipeline.stream(question, history=turns):
            if isinstance(event, SourcesEvent):
                sources_md = sources_markdown(event.sources)
                chat[-1] = {"role": "assistant", "content": f"{sources_md}\n\n_Writing the answer..._"}
            elif isinstance(event, TokenEvent):
                text += event.text
                chat[-1] = {"role": "assistant", "content": f"{_esc(text)}\n\n---\n{sources_md}"}
            elif isinstance(event, DoneEvent):
                final = event.answer
                chat[-1] = {"role": "assistant", "content": f"{_esc(final.text)}\n\n---\n{references_markdown(final)}"}
                turns = turns + [(question, final.text)]
            yield list(chat), turns  # a new list per step: each yielded state stays as it was
    except PaperChatError as exc:
        chat[-1] = {"role": "assistant", "content": f"⚠️ {_esc(str(exc))}"}
        yield list(chat), turns


def build_app(pipeline: Pipeline) -> gr.Blocks:
    with gr.Blocks(title="PaperChat · ICLR 2026") as app:
        gr.Markdown("## PaperChat · ask the ICLR 2026 papers\nAnswers cite the papers they come from.")
        chatbot = gr.Chatbot(label="Chat", height=520, sanitize_html=True)
        turns = gr.State([])
        with gr.Row():
            box = gr.Textbox(placeholder="Ask about ICLR 2026 papers...", show_label=False, scale=8)
            send = gr.Button("Send", variant="primary", scale=1)
        gr.Examples(EXAMPLES, inputs=box)

        def handler(message, chat, state):
            yield from respond(pipeline, message, chat or [], state or [])

        for trigger in (box.submit, send.click):
            trigger(handler, [box, chatbot, turns], [chatbot, turns]).then(lambda: "", None, box)
    return app


def launch(pipeline: Pipeline, host: str, port: int) -> None:
    app = build_app(pipeline)
    app.queue(default_concurrency_limit=1).launch(server_name=host, server_port=port, theme=THEME,
                                                  show_error=False, share=False)
