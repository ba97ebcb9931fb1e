from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_lib.loader.load import NotebookLoadError, load_notebook, load_notebooks, notebook_paths


def _write(path, cells):
    nbformat.write(new_notebook(cells=cells), path)
    return path


def _test_cell(source):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "t", "points": 1, "locked": True,
                                 "schema_version": 3, "task": False}
    return cell


def test_definitions_load_and_training_cells_are_skipped(tmp_path):
    """Are definitions importable while training, explore and nbgrader test cells are skipped?"""
    training = new_code_cell("raise SystemExit('training ran')")
    training.metadata["tags"] = ["training"]
    explore = new_code_cell("raise SystemExit('explorer ran')")
    explore.metadata["tags"] = ["explore"]
    path = _write(tmp_path / "nb.ipynb", [
        new_markdown_cell("# title"),
        new_code_cell("%matplotlib inline\nimport math\ndef area(r):\n    return math.pi * r * r"),
        training, explore, _test_cell("assert False, 'test cell ran'"),
    ])
    module = load_notebook(path)
    assert module.area(1.0) == pytest.approx(3.14159, abs=1e-4)


def test_later_notebooks_see_and_override_earlier_ones(tmp_path):
    """Do several notebooks load into one namespace in order?"""
    _write(tmp_path / "01_a.ipynb", [new_code_cell("x = 1\ndef f():\n    return x")])
    _write(tmp_path / "02_b.ipynb", [new_code_cell("x = 2")])
    module = load_notebooks(notebook_paths(tmp_path))
    assert module.f() == 2


def test_syntax_error_names_the_cell(tmp_path):
    """Does a syntax error say which notebook and cell it is in?"""
    path = _write(tmp_path / "bad.ipynb", [new_code_cell("x = 1"), new_code_cell("def f(:\n    pass")])
    with pytest.raises(NotebookLoadError, match=r"bad.ipynb cell 1: syntax error"):
        load_notebook(path)


def test_runtime_error_names_the_cell(tmp_path):
    """Does an exception at import time say which cell raised it?"""
    path = _write(tmp_path / "boom.ipynb", [new_code_cell("1 / 0")])
    with pytest.raises(NotebookLoadError, match=r"boom.ipynb cell 0: ZeroDivisionError"):
        load_notebook(path)


def test_corrupt_and_missing_notebooks(tmp_path):
    """Are corrupt JSON and a missing notebook reported clearly?"""
    (tmp_path / "corrupt.ipynb").write_text("{not json", encoding="utf-8")
    with pytest.raises(NotebookLoadError, match="not a readable notebook"):
        load_notebook(tmp_path / "corrupt.ipynb")
    with pytest.raises(NotebookLoadError, match="not found"):
        load_notebook(tmp_path / "missing.ipynb")


def test_solution_notebooks_define_every_graded_part(reference):
    """Do the solution notebooks define every graded part the runs need?"""
    for name in ("CharCorruptionDataset", "SynthesizerAttention", "initialize_vanilla_model",
                 "initialize_synthesizer_model", "finetune", "pretrain", "train"):
        assert hasattr(reference, name), name


def test_unwritten_answer_cells_are_skipped(tmp_path):
    """Does a top-level cell that raises NotImplementedError leave the rest of the notebook loadable?"""
    path = _write(tmp_path / "nb.ipynb", [new_code_cell("raise NotImplementedError()"), new_code_cell("y = 3")])
    module = load_notebook(path)
    assert module.y == 3 and module.__not_written__ == ["nb.ipynb cell 0"]


IPYTHON_CELLS = {
    "display": "x = 2\ndisplay(x)",
    "cell magic": "%%bash\necho this never runs\nexit 1",
    "shell escape into a variable": "files = !ls\nlisting = list(files)",
    "shell escape": "!pip install something-from-the-network",
    "help": "len?",
    "continuation line starting with %": "remainder = 17 \\\n% 5",
    "timed definition": "%%time\ndef timed():\n    return 'timed'",
    "timeit with options": "%timeit -n 3 -r 1 timeit_ran.append(1)",
    "profiled definition": "%%prun -q -T never_written.txt\ndef profiled():\n    return 'profiled'",
    "profiled line": "%prun -q prun_ran.append(1)",
    "captured definition": "%%capture out\nprint('quiet')\ncaptured = 'yes'",
    "line magic": "%matplotlib inline\n%load_ext autoreload\n%autoreload 2\nafter_magics = True",
    "top-level await": "import asyncio\nawaited = await asyncio.sleep(0, result='done')",
    "exit": "exit()\nafter_exit = True",
}


def test_cells_in_ipython_syntax_load_as_in_jupyter(tmp_path):
    """Does every cell a Jupyter kernel runs (magics, shell escapes, help, await) load, with side effects inert?"""
    cells = [new_code_cell("timeit_ran, prun_ran = [], []")]
    cells += [new_code_cell(source) for source in IPYTHON_CELLS.values()]
    module = load_notebook(_write(tmp_path / "ipython.ipynb", cells))
    assert module.x == 2 and module.listing == [] and module.remainder == 2
    assert module.timed() == "timed" and module.timeit_ran == [1] and module.captured == "yes"
    assert module.profiled() == "profiled" and module.prun_ran == [1] and not Path("never_written.txt").exists()
    assert module.after_magics and module.awaited == "done" and module.after_exit
    assert not hasattr(module, "In") and not hasattr(module, "get_ipython")


def test_recorded_errors_let_the_rest_of_the_notebook_load(tmp_path):
    """With errors='record', does a failing cell (syntax, exception) leave the later definitions loaded and say
    where?"""
    path = _write(tmp_path / "02_nb.ipynb", [new_code_cell("def f(:\n    pass"), new_code_cell("a = 1\n\n1 / 0"),
                                            new_code_cell("b = 2")])
    module = load_notebook(path, errors="record")
    assert module.a == 1 and module.b == 2
    assert [(e.label, e.kind, e.line) for e in module.__errors__] == [
        ("02_nb.ipynb cell 0", "SyntaxError", 1), ("02_nb.ipynb cell 1", "ZeroDivisionError", 3)]


def test_a_cell_past_its_time_limit_is_stopped_and_the_rest_loads(tmp_path):
    """Is a cell that runs too long stopped as a recorded error, with the cells after it still run?"""
    path = _write(tmp_path / "slow.ipynb", [new_code_cell("import time\nwhile True:\n    time.sleep(0.05)"),
                                           new_code_cell("after = 1")])
    module = load_notebooks([path], errors="record", cell_seconds=0.5)
    assert module.after == 1 and [e.kind for e in module.__errors__] == ["CellTimeout"]


def _tagged(source, *tags):
    cell = new_code_cell(source)
    cell.metadata["tags"] = list(tags)
    return cell


def _answer(source, grade_id="answer"):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "solution": True, "grade_id": grade_id, "locked": False,
                                 "schema_version": 3, "task": False}
    return cell


def test_run_all_runs_every_cell_and_each_test_cell_sees_the_names_above_it(tmp_path):
    """With skip_tags=RUN_ALL, do exploration and training cells run in order (an answer may use their names), and
    is ``at_test`` called at each test cell with the names as they stand there, a later rebinding not counting?"""
    from course_lib.loader.load import RUN_ALL

    path = _write(tmp_path / "nb.ipynb", [
        _tagged("given = 20", "explore"), _tagged("trained = 'loaded'", "training"),
        _answer("result = given + 1"), _test_cell("assert False, 'the test cell itself never runs here'"),
        _tagged("result = 'rebound by an exploration'", "explore")])
    seen = {}
    module = load_notebooks([path], skip_tags=RUN_ALL, errors="record",
                            at_test=lambda gid, names: seen.update({gid: dict(names)}))
    assert seen["t"]["result"] == 21 and seen["t"]["trained"] == "loaded"
    assert "In" not in seen["t"] and "get_ipython" not in seen["t"]  # the notebook's own names only
    assert module.result == "rebound by an exploration" and module.__errors__ == []
    assert load_notebooks([path], errors="record").__errors__[0].kind == "NameError"  # `given` is an exploration's


def test_a_repeated_grade_id_runs_every_cell_and_is_checked_at_its_last_test_cell(tmp_path):
    """When a cell split (or copied) in JupyterLab repeats a grade_id, do all its cells run in order, is the check
    placed at the last test cell of the grade_id (the one nbgrader keeps), and are the cells listed?"""
    path = _write(tmp_path / "02_nb.ipynb", [
        _answer("def f():\n    return 1"), _answer("result = f() + 1"), _test_cell("pass"),
        new_code_cell("result = 'after the first copy'"), _test_cell("pass")])
    seen = []
    module = load_notebooks([path], errors="record", at_test=lambda gid, names: seen.append((gid, names["result"])))
    assert seen == [("t", "after the first copy")]
    assert module.__repeated__ == [["02_nb.ipynb cell 0 (answer)", "02_nb.ipynb cell 1 (answer)"],
                                   ["02_nb.ipynb cell 2 (t)", "02_nb.ipynb cell 4 (t)"]]
