
import pytest
import torch

from course_lib.checks.span import TOY_CORPUS, span_corruption_problems
from course_lib.data_files import read_text
from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.gpt.vocab import MASK_CHAR, PAD_CHAR, UnknownCharacterError


def test_vocabulary_order(original_data):
    """Is PAD index 0, MASK index 1, then the sorted characters, 256 symbols on the original wiki.txt?"""
    data = CharCorruptionDatasetBase(read_text(original_data / "wiki.txt"), 128)
    assert data.itos[0] == PAD_CHAR and data.itos[1] == MASK_CHAR
    chars = [data.itos[i] for i in range(2, data.vocab_size)]
    assert chars == sorted(chars)
    assert data.vocab_size == 256 and len(data) == 2938


def test_name_dataset_rows_of_the_original_train_file(original_data):
    """Do x and y of a real training row follow SPEC's layout exactly?"""
    pretrain = CharCorruptionDatasetBase(read_text(original_data / "wiki.txt"), 128)
    text = read_text(original_data / "birth_places_train.tsv")
    names = NameDataset(pretrain, text)
    assert len(names) == 2000
    for idx in (0, 1, 1999):
        question, place = text.split("\n")[idx].split("\t")
        x, y = names[idx]
        assert x.shape == y.shape == (127,) and x.dtype == torch.long
        full = question + MASK_CHAR + place + MASK_CHAR
        full = full + PAD_CHAR * (128 - len(full))
        assert pretrain.vocab.decode(x) == full[:-1]
        expected_y = PAD_CHAR * (len(question) - 1) + full[len(question):]
        assert pretrain.vocab.decode(y) == expected_y
        # only "⁇place⁇" is learned: the first non-PAD target is the MASK after the question
        first = int((y != 0).nonzero()[0])
        assert first == len(question) - 1 and pretrain.itos[int(y[first])] == MASK_CHAR


def test_name_dataset_drops_non_ascii_and_keeps_unterminated_last_line():
    """Are non-ASCII characters dropped, and is a last line without a newline kept?"""
    pretrain = CharCorruptionDatasetBase(TOY_CORPUS + "?W", 64)
    names = NameDataset(pretrain, "Where was Ada Quill born?\tMarlöw\nWhere was Bo Renn born?\tOstheim")
    assert len(names) == 2
    x, _ = names[0]
    assert pretrain.vocab.decode(x).startswith(f"Where was Ada Quill born?{MASK_CHAR}Marlw{MASK_CHAR}")


def test_name_dataset_unknown_character_is_a_clear_error():
    """Does a character missing from the pretraining text raise an error naming it?"""
    pretrain = CharCorruptionDatasetBase(TOY_CORPUS + "?W", 64)
    names = NameDataset(pretrain, "Where was Zed born?\tX\n")
    with pytest.raises(UnknownCharacterError, match="'Z'"):
        names[0]


def test_name_dataset_malformed_line_is_a_clear_error():
    """Does a line without a TAB raise an error that quotes the line?"""
    pretrain = CharCorruptionDatasetBase(TOY_CORPUS + "?W", 64)
    with pytest.raises(ValueError, match="not 'question<TAB>place'"):
        NameDataset(pretrain, "Where was Ada Quill born? Marlow\n")[0]


def test_span_corruption_placeholder_until_written():
    """Does the given base class tell the student to write __getitem__?"""
    with pytest.raises(NotImplementedError, match="__getitem__"):
        CharCorruptionDatasetBase(TOY_CORPUS, 50)[0]


@pytest.mark.parametrize("block_size", [50, 128])
def test_reference_span_corruption_passes_every_spec_check_on_toy_corpus(reference, block_size):
    """Does the reference span corruption satisfy every SPEC property on the toy corpus?"""
    assert span_corruption_problems(reference.CharCorruptionDataset, block_size=block_size, samples=400) == []


def test_reference_span_corruption_on_original_wiki(reference, original_data):
    """Does the reference satisfy every SPEC property on the original wiki.txt?"""
    corpus = read_text(original_data / "wiki.txt")
    corpus = "\n".join(d for d in corpus.split("\n")[:400] if len(d) >= 4)
    assert span_corruption_problems(reference.CharCorruptionDataset, block_size=128, samples=400, corpus=corpus) == []


def test_span_checks_catch_a_wrong_implementation():
    """Do the span-corruption checks fail an implementation that never truncates?"""

    class NoTruncation(CharCorruptionDatasetBase):
        def __getitem__(self, idx):
            doc = self.data[idx][: int(self.block_size * 7 / 8)]
            k = len(doc) // 4
            text = doc[:k] + MASK_CHAR + doc[2 * k:] + MASK_CHAR + doc[k:2 * k] + MASK_CHAR
            text += PAD_CHAR * (self.block_size - len(text))
            return self.vocab.encode(text[:-1]), self.vocab.encode(text[1:])

    problems = span_corruption_problems(NoTruncation, block_size=50, samples=100)
    assert any("random" in p for p in problems)
