"""Every prompt PaperChat sends, as named constants. Small models follow instructions placed
after the sources better than before them, so the instructions close the user message."""

# The exact sentence the model must use when the sources do not answer; code and tests look for it.
CANNOT_ANSWER = "The retrieved papers do not answer this question."
CANNOT_ANSWER_ZH = "检索到的论文无法回答这个问题。"

SYSTEM_PROMPT = (
    "You are PaperChat, a research assistant for the ICLR 2026 conference. "
    "You answer only from the numbered paper abstracts you are given, and you cite them."
)

SOURCE_TEMPLATE = "[{n}] {title} ({status}, id {paper_id})\n{text}"

ANSWER_TEMPLATE = """Sources:

{sources}

Question: {question}

Instructions: Answer the question in 2 to 5 short sentences using only the sources above. \
End every sentence with the number of the source it comes from in square brackets, like [1] or [2][3]. \
Summarize in your own words; do not copy the abstracts. \
If none of the sources answers the question, reply only: {cannot_answer}{language_hint}"""

LANGUAGE_HINT_ZH = "\nThe question is in Chinese: answer in Simplified Chinese, keep paper titles in English."
