import torch

from course_lib.gpt.evaluation import accuracy, baseline_accuracy, extract_prediction, greedy_decode, write_predictions
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.vocab import MASK_CHAR


@torch.no_grad()
def _one_at_a_time(model, prompt, steps):
    x = prompt[None]
    for _ in range(steps):
        logits, _ = model(x[:, -(model.get_block_size() - 1):])
        x = torch.cat([x, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return x[0]


def test_batched_greedy_equals_one_at_a_time():
    """Does batched decoding give exactly the tokens of the plain one-prompt loop?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(20, 32, n_layer=2, n_head=2, n_embd=16)).eval()
    prompts = [torch.randint(2, 20, (n,)) for n in (3, 7, 7, 12, 3, 20)]
    batched = greedy_decode(model, prompts, steps=16, batch_size=2)
    for prompt, out in zip(prompts, batched):
        assert torch.equal(out, _one_at_a_time(model, prompt, 16))


def test_prediction_is_between_first_and_second_mask():
    """Is the prediction the text between the first and second MASK?"""
    assert extract_prediction(f"Where was A born?{MASK_CHAR}Paris{MASK_CHAR}xx") == "Paris"
    assert extract_prediction("no mask at all") == ""


def test_accuracy_and_baseline(tmp_path):
    """Does the majority baseline answer the training set's commonest place?"""
    (tmp_path / "train.tsv").write_text("Where was A born?\tX\nWhere was B born?\tX\nWhere was C born?\tY\n")
    (tmp_path / "dev.tsv").write_text("Where was D born?\tX\nWhere was E born?\tZ\n")
    assert baseline_accuracy(tmp_path / "train.tsv", tmp_path / "dev.tsv") == ("X", 0.5)
    assert accuracy(["X", "Y"], ["X", "Z"]) == (1, 2)


def test_baseline_on_original_dev_is_five_percent(original_data):
    """Does answering 'London' score 25/500 on the original dev set, as SPEC measured?"""
    place, acc = baseline_accuracy(original_data / "birth_places_train.tsv", original_data / "birth_dev.tsv")
    assert place == "London" and acc == 0.05


def test_predictions_file_has_one_line_each(tmp_path):
    """Is each prediction written on its own line?"""
    path = write_predictions(["Paris", "", "Rome"], tmp_path / "p")
    assert path.read_text() == "Paris\n\nRome\n"


def test_kv_cache_decoding_equals_plain_decoding():
    """Does decoding with the key/value cache give exactly the plain loop's tokens?"""
    torch.manual_seed(1)
    model = GPT(GPTConfig(30, 64, n_layer=2, n_head=4, n_embd=32)).eval()
    assert model.supports_kv_cache()
    prompts = [torch.randint(2, 30, (n,)) for n in (5, 9, 9, 20)]
    cached = greedy_decode(model, prompts, steps=24, use_cache=True)
    plain = greedy_decode(model, prompts, steps=24, use_cache=False)
    assert all(torch.equal(a, b) for a, b in zip(cached, plain))


def test_line_breaks_in_a_prediction_become_spaces():
    """Does a predicted line break stay on one line of the predictions file?"""
    assert extract_prediction(f"Q?{MASK_CHAR}New\nYork{MASK_CHAR}") == "New York"
