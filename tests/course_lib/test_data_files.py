import pytest

from course_lib.data_files import DataFormatError, read_birth_places, read_predictions, read_text


def test_missing_file_names_the_path(tmp_path):
    """Does a missing data file raise FileNotFoundError naming the file and how to make one?"""
    with pytest.raises(FileNotFoundError, match="course_lib world"):
        read_text(tmp_path / "wiki.txt")


def test_malformed_tsv_line_is_reported_with_its_line_number(tmp_path):
    """Does a line that is not a birth-place question name its file and line?"""
    path = tmp_path / "bad.tsv"
    path.write_text("Where was A born?\tX\nWho is B?\tY\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"bad.tsv:2"):
        read_birth_places(path)


def test_missing_answer_when_required(tmp_path):
    """Does a gold file without a place after the TAB raise when answers are required?"""
    path = tmp_path / "gold.tsv"
    path.write_text("Where was A born?\n", encoding="utf-8")
    assert read_birth_places(path)[0].place is None
    with pytest.raises(DataFormatError, match="missing the place"):
        read_birth_places(path, require_answers=True)


def test_original_files_parse(original_data):
    """Do the original files parse with the counts SPEC gives?"""
    assert len(read_birth_places(original_data / "birth_places_train.tsv", require_answers=True)) == 2000
    assert len(read_birth_places(original_data / "birth_dev.tsv", require_answers=True)) == 500
    inputs = read_birth_places(original_data / "birth_test_inputs.tsv")
    assert len(inputs) == 437 and all(e.place is None for e in inputs)


def test_predictions_file_lines(tmp_path):
    """Is the trailing newline of a predictions file not read as an empty prediction?"""
    (tmp_path / "p").write_text("London\n\nParis\n", encoding="utf-8")
    assert read_predictions(tmp_path / "p") == ["London", "", "Paris"]


@pytest.mark.parametrize("raw", [b"London\r\n\r\nParis\r\n", b"\xef\xbb\xbfLondon\n\nParis\n", b"London\r\rParis",
                                 b"\xef\xbb\xbfLondon\r\n\r\nParis"])
def test_predictions_in_other_line_ends_and_with_a_byte_order_mark_read_the_same(tmp_path, raw):
    """Do CRLF or CR line ends, a UTF-8 byte-order mark and a missing final newline give the same predictions?"""
    (tmp_path / "p").write_bytes(raw)
    assert read_predictions(tmp_path / "p") == ["London", "", "Paris"]


def test_a_tsv_in_windows_line_ends_parses(tmp_path):
    """Does a birth-place file saved with CRLF line ends and a byte-order mark parse to the same examples?"""
    (tmp_path / "crlf.tsv").write_bytes(b"\xef\xbb\xbfWhere was A born?\tX\r\nWhere was B born?\tY\r\n")
    assert [(e.question, e.place) for e in read_birth_places(tmp_path / "crlf.tsv")] == [
        ("Where was A born?", "X"), ("Where was B born?", "Y")]
