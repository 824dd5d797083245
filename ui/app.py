"""The Gradio app: `build_app(pipeline)` wires a chat, filters and a paper panel to `rag` calls.

Per-user state (the turns of the conversation) lives in `gr.State`, so two tabs never share a chat.
Rendering is in `ui/render.py`; this module only connects events.
"""

from __future__ import annotations

import atexit
import ipaddress
import logging
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import gradio as gr

from rag.errors import ConfigError, PaperChatError, QuestionError
from rag.pipeline import (STATUS_GROUPS, Answer, DoneEvent, Event, Exchange, Filters, Pipeline, QuoteEvent,
                          SourcesEvent, TokenEvent, WaitEvent)
from rag.settings import UISettings
from ui import render
from ui.explore import build_explore, scoped
from ui.render import Turn

log = logging.getLogger(__name__)
QUESTION_PREVIEW_CHARS = 300  # a refused 100,000-character paste is not echoed back whole
FAILED = ("⚠️ Something went wrong while answering ({name}). Ask again; if it keeps happening, "
          "the details are in the app log.")

# System fonts only: a Google font would make the browser reach the internet.
THEME = gr.themes.Default(font=["ui-sans-serif", "system-ui", "sans-serif"],
                          font_mono=["ui-monospace", "monospace"])
EXAMPLES = [
    "What is DroPE and why does it extend context?",
    "How can KV cache eviction be made accurate without generating a draft response?",
    "有没有关于KV缓存压缩的论文？",
    "DroPE是什么？它为什么能扩展上下文？",
]
DEFAULT_STATUS = "All accepted"
CSS = """
.paper-panel { font-size: 0.95em; line-height: 1.45; }
.paper-panel mark { background: #fff3a3; padding: 0 1px; }
.paper-panel.empty { color: #777; }
#cite-target, #cite-open, #lasso-points, #lasso-apply { display: none !important; }
.topic-map svg { cursor: crosshair; touch-action: none; user-select: none; }
.topic-map polyline.lasso { fill: rgba(31, 120, 180, 0.12); stroke: #1f78b4; stroke-width: 1.5; stroke-dasharray: 4 3; }
.scope-chip { display: inline-block; padding: 2px 10px; border-radius: 12px; background: #dbeafe; }
.scope-chip.empty { background: #eee; color: #666; }
.topic-map svg { background: #fafafa; border: 1px solid #e5e5e5; border-radius: 6px; }
.topic-map .cluster-label { font-size: 9px; fill: #222; paint-order: stroke; stroke: #fff; stroke-width: 2.5px;
  pointer-events: none; }
.map-legend { font-size: 0.85em; color: #555; margin-top: 4px; }
.map-legend .dot { display: inline-block; width: 9px; height: 9px; border-radius: 50%; }
.map-legend .dot.cited { background: #e31a1c; } .map-legend .dot.scoped { background: #1f78b4; }
"""
# The page's script. A click on a citation link ("#cite-<turn>-<n>") is caught here and handed to Python
# through a hidden textbox and a hidden button; the click time makes repeated clicks on the same citation count.
PAGE_JS = """
() => {
  window.__paperchatCitations = true;
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest ? ev.target.closest('a[href^="#cite-"]') : null;
    if (!a) return;
    ev.preventDefault(); ev.stopPropagation();
    const box = document.querySelector('#cite-target textarea, #cite-target input');
    if (!box) return;
    box.value = a.getAttribute('href').slice('#cite-'.length) + '|' + Date.now();
    box.dispatchEvent(new Event('input', { bubbles: true }));
    setTimeout(() => document.querySelector('#cite-open').click(), 50);
  }, true);

  // The lasso: press and drag on the topic map; the outline (in the SVG's viewBox pixels) goes to Python
  // through a hidden textbox and button, which scope the next question to the papers inside it.
  let lasso = null;
  const at = (svg, ev) => {
    const p = svg.createSVGPoint(); p.x = ev.clientX; p.y = ev.clientY;
    const q = p.matrixTransform(svg.getScreenCTM().inverse());
    return [Math.round(q.x * 10) / 10, Math.round(q.y * 10) / 10];
  };
  document.addEventListener('pointerdown', (ev) => {
    const svg = ev.target.closest ? ev.target.closest('#topic-map svg') : null;
    if (!svg || ev.button !== 0) return;
    ev.preventDefault();
    const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    line.setAttribute('class', 'lasso');
    svg.appendChild(line);
    lasso = { svg, line, points: [at(svg, ev)] };
  });
  document.addEventListener('pointermove', (ev) => {
    if (!lasso) return;
    lasso.points.push(at(lasso.svg, ev));
    lasso.line.setAttribute('points', lasso.points.map((p) => p.join(',')).join(' '));
  });
  document.addEventListener('pointerup', () => {
    if (!lasso) return;
    const points = lasso.points; lasso = null;
    if (points.length < 3) return;
    const box = document.querySelector('#lasso-points textarea, #lasso-points input');
    if (!box) return;
    box.value = points.map((p) => p.join(',')).join(' ');
    box.dispatchEvent(new Event('input', { bubbles: true }));
    setTimeout(() => document.querySelector('#lasso-apply').click(), 50);
  });
}
"""


def make_filters(status: str, areas: list[str] | None, keywords: str = "") -> Filters:
    """The filter panel's choices; keywords are comma-separated and must all be among a paper's keywords."""
    words = tuple(k.strip() for k in (keywords or "").replace("，", ",").split(",") if k.strip())
    return Filters(statuses=STATUS_GROUPS.get(status, ()), primary_areas=tuple(areas or ()), keywords=words)


def status_line(event: WaitEvent) -> str:
    """What a user sees while the model is busy with others, or reading this question's papers."""
    if event.ahead:
        return f"_Waiting for the model: {event.ahead} question(s) ahead of yours (the quotes above are ready)..._"
    if event.estimate_s is not None:
        return (f"_Writing a summary: the model reads {event.prompt_tokens:,} tokens first, about "
                f"{max(1, round(event.estimate_s))} s on this machine..._")
    return (f"_Writing a summary: the model reads {event.prompt_tokens:,} tokens first (its speed on this machine "
            "is measured on this answer)..._")


STOP_POLL_S = 0.1  # how soon a Stop is seen while no event comes (the model reading its prompt)
_END = object()


def stoppable(stream: Iterator[Event], should_stop: Callable[[], bool], poll_s: float = STOP_POLL_S) -> Iterator[Event | None]:
    """The events of `stream`, with None once `should_stop()` turns true, even while the stream is blocked.

    A worker thread reads the stream, so a Stop pressed while the model reads its prompt (seconds without an
    event) is seen within `poll_s`. The worker closes the stream at its next event, or at once when it ends;
    closing it closes the HTTP stream, so the model server stops, and frees the model for the next question.
    """
    events: queue.Queue = queue.Queue()
    cancelled = threading.Event()

    def pump() -> None:
        try:
            for event in stream:
                if cancelled.is_set():
                    break
                events.put(event)
        except BaseException as exc:  # handed to the reader, who raises it in the chat turn
            events.put(exc)
        finally:
            stream.close()
            events.put(_END)

    threading.Thread(target=pump, name="answer-stream", daemon=True).start()
    try:
        while True:
            try:
                item = events.get(timeout=poll_s)
            except queue.Empty:
                item = None
            if should_stop():
                yield None
                return
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            if item is not None:
                yield item
    finally:
        cancelled.set()  # also when the browser went away and Gradio closed this turn


def respond(pipeline: Pipeline, message: str, chat: list[dict], turns: list[Turn],
            filters: Filters | None = None, k: int | None = None, pinned: tuple[str, ...] = (),
            should_stop: Callable[[], bool] = lambda: False) -> Iterator[tuple[list[dict], list[Turn]]]:
    """One chat turn: yields (chat messages, turns) as the sources arrive and the answer grows.

    When `should_stop()` turns true the stream is closed (the model server stops generating, or the question
    leaves the model's queue) and what was written is kept, marked as stopped.
    """
    try:
        question = pipeline.clean(message)
    except QuestionError as exc:
        typed = (message or "").strip()
        shown = typed[:QUESTION_PREVIEW_CHARS] + ("…" if len(typed) > QUESTION_PREVIEW_CHARS else "")
        user = [{"role": "user", "content": render.esc(shown)}] if shown else []
        yield chat + user + [{"role": "assistant", "content": f"⚠️ {render.esc(str(exc))}"}], turns
        return
    index = len(turns)
    chat = chat + [{"role": "user", "content": render.esc(question)},
                   {"role": "assistant", "content": "_Searching the papers..._"}]
    yield list(chat), turns
    history = [Exchange(t.question, t.answer.prose, tuple(s.paper.title for s in t.answer.sources),
                        tuple(s.paper.id for s in t.answer.sources))
               for t in turns if t.answer.text]
    done, sources, lead, text, status, searched = list(turns), [], "", "", "", ""
    stream = pipeline.stream(question, history=history, filters=filters, k=k, pinned=pinned)
    try:
        for event in stoppable(stream, should_stop):
            if event is None:  # Stop: the stream is closed by its reader, so the model server stops too
                stopped = Answer.partial(question, lead, text, sources)
                turns = done + [Turn(question, stopped, searched)]
                chat[-1] = {"role": "assistant",
                            "content": render.final_message(index, stopped, searched) + "\n\n_Stopped._"}
                yield list(chat), turns
                return
            if isinstance(event, SourcesEvent):
                sources = event.sources
                searched = event.query.text if event.query and event.query.rewritten else ""
                # The turn is in the state from now on, so its sources can be opened while the model writes.
                turns = done + [Turn(question, Answer(question, "", sources), searched)]
            elif isinstance(event, QuoteEvent):
                lead = event.text
            elif isinstance(event, WaitEvent):
                status = status_line(event)
            elif isinstance(event, TokenEvent):
                text, status = text + event.text, ""
            if isinstance(event, DoneEvent):
                turns = done + [Turn(question, event.answer, searched)]
                chat[-1] = {"role": "assistant", "content": render.final_message(index, event.answer, searched)}
            else:
                chat[-1] = {"role": "assistant",
                            "content": render.streaming_message(index, sources, lead, text, status, searched)}
            yield list(chat), turns  # a new list per step: each yielded state stays as it was
    except PaperChatError as exc:
        chat[-1] = {"role": "assistant", "content": f"⚠️ {render.esc(str(exc))}"}
        yield list(chat), done  # the failed turn is not kept: asking again starts it afresh
    except Exception as exc:  # a bug or an unexpected failure: a message in the chat, the traceback in the log
        log.exception("answering %r failed", question[:80])
        chat[-1] = {"role": "assistant", "content": FAILED.format(name=exc.__class__.__name__)}
        yield list(chat), done


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def login_for(host: str, ui: UISettings) -> tuple[str, str] | None:
    """The login the app needs on `host`; refuses a non-loopback address without one."""
    login = ui.login()
    if login is None and not is_loopback(host):
        raise ConfigError(
            f"Refusing to serve on {host} without a login: anyone on the network could use it. Set "
            "PAPERCHAT_UI__AUTH_USER and PAPERCHAT_UI__AUTH_PASSWORD, or bind 127.0.0.1 (the default)."
        )
    return login


def open_citation(target: str, turns: list[Turn]) -> str:
    """Side-panel HTML for the clicked `[n]` of a given turn."""
    parsed = render.parse_cite_target(target)
    if parsed is None or parsed[0] >= len(turns):
        return render.paper_panel(None)
    turn, n = parsed
    source = next((s for s in turns[turn].answer.sources if s.n == n), None)
    return render.paper_panel(source)


def cited_paper(target: str, turns: list[Turn]) -> tuple[str, str]:
    """(id, title) of the paper a citation opens, for the side panel's Similar and Pin buttons."""
    parsed = render.parse_cite_target(target)
    if parsed is None or parsed[0] >= len(turns):
        return "", ""
    source = next((s for s in turns[parsed[0]].answer.sources if s.n == parsed[1]), None)
    return (source.paper.id, source.paper.title) if source else ("", "")


def export_files(turns: list[Turn], folder: Path) -> tuple[str | None, str | None]:
    """Write the conversation (Markdown) and its cited papers (BibTeX) for download."""
    if not turns:
        return None, None
    md, bib = folder / "paperchat-conversation.md", folder / "paperchat-references.bib"
    md.write_text(render.conversation_markdown(turns), encoding="utf-8")
    bib.write_text(render.bibtex(turns), encoding="utf-8")
    return str(md), str(bib)


def build_app(pipeline: Pipeline) -> gr.Blocks:
    areas = pipeline.areas()
    topic_map, _ = pipeline.topic_map()  # stored; rebuilt only if stale
    with gr.Blocks(title="PaperChat · ICLR 2026") as app:
        turns = gr.State([])
        gr.Markdown("## PaperChat · ask the ICLR 2026 papers\nEvery claim is cited; click a citation to read the paper.")
        with gr.Row():
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(label="Chat", height=560, sanitize_html=True, elem_id="chat",
                                     feedback_options=None, placeholder="Ask a question about ICLR 2026 papers.")
                with gr.Row():
                    box = gr.Textbox(placeholder="e.g. Which papers drop positional embeddings to extend context?",
                                     show_label=False, scale=8, elem_id="question", autofocus=True)
                    send = gr.Button("Send", variant="primary", scale=0, min_width=90, elem_id="send")
                    stop = gr.Button("Stop", variant="stop", scale=0, min_width=90, elem_id="stop")
                gr.Examples(EXAMPLES, inputs=box, label="Examples")
                with gr.Row():
                    clear = gr.Button("New chat", size="sm")
                    md_file = gr.DownloadButton("Export Markdown", size="sm", interactive=False, elem_id="export-md")
                    bib_file = gr.DownloadButton("Export BibTeX", size="sm", interactive=False, elem_id="export-bib")
            with gr.Column(scale=2):
                with gr.Accordion("Filters", open=True):
                    status = gr.Radio(list(STATUS_GROUPS), value=DEFAULT_STATUS, label="Status", elem_id="status")
                    area = gr.Dropdown(areas, value=[], multiselect=True, label="Primary area (any if empty)")
                    keywords = gr.Textbox("", label="Keywords (comma-separated; a paper must list all of them)",
                                          placeholder="e.g. kv cache, long context", elem_id="keywords")
                    k = gr.Slider(1, 10, value=pipeline.settings.retrieval.k, step=1, label="Papers to retrieve")
                panel = gr.HTML(render.paper_panel(None), elem_id="paper-panel")
                cite_target = gr.Textbox(elem_id="cite-target", show_label=False, container=False)
                cite_open = gr.Button("open citation", elem_id="cite-open")
                explore = build_explore(pipeline, topic_map)

        export_dir = Path(tempfile.mkdtemp(prefix="paperchat-export-"))
        atexit.register(shutil.rmtree, export_dir, ignore_errors=True)  # the exports live as long as the app
        stop_requests: dict[str, threading.Event] = {}  # session -> Stop pressed (read by that session's turn)

        def handler(message, chat, state, status_value, area_value, k_value, keywords_value="", scope_value=None,
                    pinned_value=(), only_pinned=False, request: gr.Request = None):
            flag = stop_requests.setdefault(request.session_hash or "", threading.Event())
            flag.clear()
            filters, k_asked = scoped(make_filters(status_value, area_value, keywords_value),
                                      scope_value or explore.scope.value, pinned_value or [], only_pinned, int(k_value))
            pins = tuple(pid for pid, _ in pinned_value or [])
            question = message or ""
            chat, state = chat or [], state or []

            # The box is emptied as the turn starts, never after it: a next question typed while this
            # answer finishes must not be wiped.
            box_value = ""
            for chat, state in respond(pipeline, question, chat, state, filters, k_asked, pins, should_stop=flag.is_set):
                yield chat, state, gr.skip(), box_value
                box_value = gr.skip()
            yield chat, state, explore.refresh_map(state, scope_value), box_value  # the answer's papers light up

        def request_stop(request: gr.Request):
            flag = stop_requests.get(request.session_hash or "")
            if flag:
                flag.set()

        def after_answer(state, request: gr.Request):
            folder = export_dir / (request.session_hash or "session") if request else export_dir
            folder.mkdir(parents=True, exist_ok=True)
            md, bib = export_files(state or [], folder)
            return gr.update(value=md, interactive=md is not None), gr.update(value=bib, interactive=bib is not None)

        inputs = [box, chatbot, turns, status, area, k, keywords, explore.scope, explore.pinned, explore.only_pinned]
        events = [
            # Gradio runs every handler at once: sources, quotes, tables and counts need no model and are served
            # to everyone without waiting; the pipeline queues only the model's part (rag.models.slots), showing
            # each user their place. Gradio's own queue (a concurrency limit on this event) would hold the whole
            # turn, sources included, behind every answer in front of it (benchmarks/README.md, "Load").
            send.click(handler, inputs, [chatbot, turns, explore.plot, box], api_name="ask", concurrency_limit=None),
            box.submit(handler, inputs, [chatbot, turns, explore.plot, box], api_visibility="private",
                       concurrency_limit=None),
        ]
        for event in events:
            event.then(after_answer, [turns], [md_file, bib_file], api_visibility="private")
        # Not queued: a Stop must not wait behind the answer it stops.
        stop.click(request_stop, None, None, queue=False, api_visibility="private")
        cite_open.click(lambda t, s: (open_citation(t, s), cited_paper(t, s)), [cite_target, turns],
                        [panel, explore.current], show_progress="hidden", api_visibility="private")
        clear.click(lambda: ([], [], render.paper_panel(None)), None, [chatbot, turns, panel],
                    api_visibility="private")
    return app


def launch(pipeline: Pipeline, host: str, port: int, block: bool = True) -> gr.Blocks:
    auth = login_for(host, pipeline.settings.ui)
    app = build_app(pipeline)
    app.queue(default_concurrency_limit=1).launch(
        server_name=host, server_port=port, theme=THEME, css=CSS, js=PAGE_JS, auth=auth,
        show_error=False, share=False, prevent_thread_lock=not block, footer_links=[],
    )
    return app
