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

{instructions}"""

INSTRUCTIONS_EN = (
    "Instructions: Using only the sources above, answer the question in at most 4 sentences, in your own words. "
    "End each sentence with the number of the one source it comes from, in square brackets, like [1]. "
    "Cite a source only if it really says what the sentence says. "
    "If no source answers the question, reply only: " + CANNOT_ANSWER
)
# Chinese questions get Chinese instructions: the small embedded model then answers in Chinese.
INSTRUCTIONS_ZH = (
    "要求：只根据上面的论文摘要，用简体中文回答问题，最多4句话，论文标题保留英文。"
    "每句话末尾用方括号写出它来自的来源编号，例如[1]。"
    "如果没有任何来源能回答这个问题，只回复：" + CANNOT_ANSWER_ZH
)
