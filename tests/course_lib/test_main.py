"""The course command line: what a student sees when a part is not written yet."""
from __future__ import annotations

from conftest import REPO

from course_lib.__main__ import main


def test_an_unwritten_part_is_named_with_its_notebook_and_cell(tmp_path, world_dir, capsys):
    """Does a run on the blank release name the notebook and cell to write, instead of a bare 'error: '?"""
    code = main(["run", "vanilla_pretrain", "--notebooks", str(REPO / "notebooks" / "a5"), "--preset", "smoke",
                 "--data-dir", str(world_dir), "--out-dir", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "02_finetune_without_pretraining.ipynb cell" in err and "not written yet" in err, err
