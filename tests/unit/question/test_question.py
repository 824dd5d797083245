import pytest

from rag.errors import QuestionError
from rag.question.clean import clean_question


def test_control_characters_and_bidi_overrides_are_removed_and_space_collapsed():
    assert clean_question(" KV\x00 cache\x1b  \u202ecompression\n\tpapers\ufeff? ", 100) == "KV cache compression papers?"


@pytest.mark.parametrize("text, says", [
    (None, "Type a question first"), ("", "Type a question first"), ("\u200b \x00", "Type a question first"),
    ("🙂🙂 ?!", "no words"), ("x" * 101, "101 characters long; the limit is 100"),
])
def test_unusable_questions_say_what_to_fix(text, says):
    with pytest.raises(QuestionError, match=says):
        clean_question(text, 100)


def test_other_scripts_and_emoji_with_words_are_kept():
    assert clean_question("有没有关于KV缓存压缩的论文？🙂", 100) == "有没有关于KV缓存压缩的论文？🙂"
