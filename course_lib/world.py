"""A seeded synthetic world of people, places and one-line biographies.

Birth places are drawn independently of names, so "Where was NAME born?" for a dev/test
person is answerable only from that person's biography, i.e. only after pretraining on
wiki.txt; finetuning on train questions teaches the format, not the dev/test facts.
The world is tiny (~30 places, short ASCII lines) so a small char-level GPT can memorise it on a CPU.

Biographies are short, so a CPU sees each fact many times a minute, and most put the full
name right before the birth place, as the question "Where was NAME born?" does: finetuning
then reaches far more of the stored facts (benchmarks/FINDINGS.md, "The synthetic world").
"""
from __future__ import annotations

import json
import math
import os
import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from course_lib.layout import DEV, TEST_ANSWERS, TEST_INPUTS, TRAIN, WIKI, WORLD_RECORD

MAX_BIO_CHARS = 110  # hard limit on one biography line
SOFT_BIO_CHARS = 105  # longer lines (up to MAX_BIO_CHARS) only when no template fits this
BIRTH_PLACE_MAX_INDEX = 70  # the birth place starts within this many characters
MAX_PEOPLE = 50_000  # keeps name generation fast and bounded
MAX_PLACES = 300  # the place generator can make far more; this keeps the world small
BIO_CHARSET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .,()-?")

SPLITS = ("train", "dev", "test", "wiki_only")  # "wiki_only": in wiki.txt, asked about nowhere

FIRST_NAMES = (
    "Ada", "Alan", "Alice", "Anna", "Arthur", "Ben", "Carl", "Clara", "Daniel", "David",
    "Edith", "Elena", "Emil", "Emma", "Eva", "Felix", "Frank", "Grace", "Hanna", "Henry",
    "Hugo", "Ida", "Ivan", "Jack", "James", "Jane", "John", "Julia", "Karl", "Kate",
    "Laura", "Leo", "Lily", "Lucas", "Marco", "Maria", "Mark", "Marta", "Max", "Mia",
    "Nina", "Noah", "Olga", "Oscar", "Paul", "Peter", "Rosa", "Ruth", "Sam", "Sara",
    "Simon", "Sofia", "Tom", "Vera", "Victor", "Walter", "Wendy", "Yusuf", "Zara", "Zoe",
)
OCCUPATIONS = (
    "painter", "engineer", "poet", "sculptor", "chemist", "novelist", "architect",
    "violinist", "journalist", "botanist", "historian", "surgeon", "teacher", "economist",
    "composer", "lawyer", "astronomer", "potter", "physician", "actor", "singer", "banker",
    "geologist", "translator",
)

# Surnames: onset, vowel, one or two (middle consonants, vowel), optional final coda.
_SUR_ONSETS = ("b", "br", "c", "d", "dr", "f", "g", "gr", "h", "j", "k", "kr", "l", "m", "n",
               "p", "pr", "r", "s", "st", "t", "tr", "v", "w", "z")
_SUR_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o")
_SUR_MIDDLES = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z",
                "nd", "rt", "st", "ld", "rn", "lm", "sh", "tr", "br", "nt")
_SUR_CODAS = ("", "", "", "n", "r", "l", "s", "k", "m", "t")
# Places: a stem, an optional linking vowel, and a place-like ending.
_PLACE_STEMS = ("Al", "Bel", "Cor", "Dun", "El", "Fen", "Gal", "Har", "Is", "Kel", "Lor",
                "Mar", "Nor", "Or", "Pel", "Quen", "Ros", "Sal", "Tor", "Val", "Wen", "Yar",
                "Zel", "Ash", "Brin", "Cal", "Dor", "Mel")
_PLACE_LINKS = ("", "", "a", "e", "i", "o")
_PLACE_ENDS = ("ford", "ton", "mere", "vale", "by", "holm", "stad", "wick", "port", "dale",
               "burg", "ia", "ora", "ena", "mouth", "field", "gard", "ova")

# a template with a question, so "?" and "W" of "Where was NAME born?" are in the vocabulary
QUESTION_TEMPLATE = "Where was {N} born? In {B}, not {P}"
# First sentences: N full name, B birth place, P another place (named in every one), AO occupation
# with article, Y birth year. The full name mostly stands right before B (module docstring).
_FIRST_TEMPLATES = (
    "{N} was born in {B} and died in {P}",
    "{N} was born in {B} and moved to {P}",
    "{N} was born in {B} in {Y} and taught in {P}",
    "{N} was born in {B} and studied in {P}",
    "{N}, born in {B}, studied in {P}",
    "{N} (born in {B}) worked in {P}",
    "{N} (born {Y} in {B}) lives in {P}",
    "{N}, {AO}, was born in {B} and works in {P}",
    "{N} worked in {P}, though born in {B}",
    QUESTION_TEMPLATE,
)
# Second sentences, naming a further place Q.
_SECOND_TEMPLATES = (
    "{S} later moved to {Q}",
    "{S} died in {Q}",
    "{S} also studied in {Q}",
    "{S} now lives in {Q}",
    "{S} taught in {Q}",
    "{S} retired to {Q}",
    "{S} worked in {Q}",
    # questions, so "?" and "W" of "Where was NAME born?" are in the vocabulary
    "Why did {S} move to {Q}? Work",
    "Was {S} happy in {Q}? Yes",
)


Seed = int | str  # a string seed lets an instructor keep a secret like secrets.token_hex(16)


def parse_seed(text: str) -> Seed:
    """A seed from the command line: digits give the int (so "0" is the practice world), anything else the string."""
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if not text:
        raise ValueError("the seed must not be empty")
    return text


def _check_seed(seed: object) -> None:
    # random.Random hashes a str seed with SHA-512, so a string gives the same world on every run
    if isinstance(seed, bool) or not isinstance(seed, (int, str)) or seed == "":
        raise ValueError(f"seed must be an int or a non-empty string, got {seed!r}")


@dataclass(frozen=True)
class WorldConfig:
    """Sizes and knobs of a synthetic world; every person is in wiki.txt exactly once."""

    n_train: int = 240  # people with a question in birth_places_train.tsv
    n_dev: int = 120  # people with a question in birth_dev.tsv
    n_test: int = 120  # people with a question in birth_test*.tsv
    n_wiki_only: int = 0  # extra people who appear only in wiki.txt
    n_places: int = 30  # distinct places (birth places and other places)
    place_skew: float = 0.5  # birth-place weight of rank r is 1/(r+2)**place_skew; 0 = uniform
    second_place_prob: float = 0.0  # chance to prefer a second sentence (one more place)

    def __post_init__(self):
        for field in ("n_train", "n_dev", "n_test", "n_wiki_only", "n_places"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"WorldConfig.{field} must be an int, got {value!r}")
        for field in ("n_train", "n_dev", "n_test"):
            if getattr(self, field) < 1:
                raise ValueError(f"WorldConfig.{field} must be at least 1, got {getattr(self, field)}")
        if self.n_wiki_only < 0:
            raise ValueError(f"WorldConfig.n_wiki_only must be >= 0, got {self.n_wiki_only}")
        if self.n_people > MAX_PEOPLE:
            raise ValueError(f"WorldConfig: {self.n_people} people in total, at most {MAX_PEOPLE} allowed")
        if not 2 <= self.n_places <= MAX_PLACES:
            raise ValueError(
                f"WorldConfig.n_places must be between 2 and {MAX_PLACES} (a biography names its birth"
                f" place and at least one other place), got {self.n_places}"
            )
        for field, low, high in (("place_skew", 0.0, 4.0), ("second_place_prob", 0.0, 1.0)):
            value = getattr(self, field)
            if (not isinstance(value, (int, float)) or isinstance(value, bool)
                    or not math.isfinite(value) or not low <= value <= high):
                raise ValueError(f"WorldConfig.{field} must be a number in [{low}, {high}], got {value!r}")

    @property
    def n_people(self) -> int:
        return self.n_train + self.n_dev + self.n_test + self.n_wiki_only


@dataclass(frozen=True)
class Person:
    """One person of the world and their biography line."""

    name: str  # "First Surname", unique in the world
    first_name: str
    surname: str  # unique in the world
    birth_place: str
    other_places: tuple[str, ...]  # 1 or 2 places named in the biography, never the birth place
    occupation: str
    birth_year: int
    split: str  # "train", "dev", "test" or "wiki_only"
    biography: str  # the wiki.txt line, without the newline

    @property
    def question(self) -> str:
        return f"Where was {self.name} born?"


@dataclass(frozen=True)
class World:
    """A generated world; ``people`` is in split order (train, dev, test, wiki-only)."""

    seed: Seed
    config: WorldConfig
    places: tuple[str, ...]  # most likely birth place first
    place_weights: tuple[float, ...]  # birth-place probabilities, aligned with places
    people: tuple[Person, ...]
    wiki_lines: tuple[str, ...]  # the biographies in wiki.txt order (a seeded shuffle)

    def split(self, name: str) -> list[Person]:
        """The people of one split ("train", "dev", "test" or "wiki_only"), in file order."""
        if name not in SPLITS:
            raise ValueError(f"unknown split {name!r}; expected one of {SPLITS}")
        return [p for p in self.people if p.split == name]


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _make_places(rng: random.Random, n: int) -> list[str]:
    places: list[str] = []
    lowered: list[str] = []
    for _ in range(1000 * n):
        if len(places) == n:
            return places
        end = rng.choice(_PLACE_ENDS)
        link = "" if end[0] in "aeiou" else rng.choice(_PLACE_LINKS)
        place = rng.choice(_PLACE_STEMS) + link + end
        low = place.lower()
        # no place is a substring of another, so a place name never hides inside another
        if not 4 <= len(place) <= 10 or any(low in o or o in low for o in lowered):
            continue
        places.append(place)
        lowered.append(low)
    raise RuntimeError(f"could not make {n} distinct place names")


def _make_surnames(rng: random.Random, n: int, taken: set[str]) -> list[str]:
    surnames: list[str] = []
    seen = set(taken)
    for _ in range(1000 * n + 1000):
        if len(surnames) == n:
            return surnames
        word = rng.choice(_SUR_ONSETS) + rng.choice(_SUR_VOWELS)
        for _ in range(rng.choice((1, 2))):
            word += rng.choice(_SUR_MIDDLES) + rng.choice(_SUR_VOWELS)
        word = (word + rng.choice(_SUR_CODAS)).capitalize()
        if not 5 <= len(word) <= 9 or word in seen:
            continue
        seen.add(word)
        surnames.append(word)
    raise RuntimeError(f"could not make {n} distinct surnames")


def _biography(rng: random.Random, name: str, surname: str, birth: str, places: list[str],
               occupation: str, year: int, second_place_prob: float,
               templates: tuple[str, ...] = _FIRST_TEMPLATES) -> tuple[str, tuple[str, ...]]:
    """Pick templates until one fits; return the line and the other places it names."""
    others = [p for p in places if p != birth]
    p, q = rng.sample(others, 2) if len(others) >= 2 else (others[0], None)
    fields = dict(N=name, S=surname, B=birth, P=p, Q=q, O=occupation, AO=_article(occupation),
                  Y=year, Y2=year + rng.randint(20, 45))
    want_second = rng.random() < second_place_prob
    second = rng.choice(_SECOND_TEMPLATES).format(**fields) if q is not None else None
    head = f"{name}. "
    birth_re = re.compile(rf"\b{birth}\b")
    # (template, with a second sentence?) in order of preference: a random template,
    # with and without the second sentence, then the next template, ...
    tries = [(t, two) for t in rng.sample(templates, len(templates))
             for two in ((True, False) if want_second else (False, True))]
    candidates = []
    for template, with_second in tries:
        uses_p = "{P}" in template
        if (with_second and second is None) or (not with_second and not uses_p):
            continue  # each biography names at least one place besides the birth place
        line = f"{head}{template.format(**fields)}" + (f". {second} ." if with_second else " .")
        named = ((p,) if uses_p else ()) + ((q,) if with_second else ())
        late = birth_re.search(line).start() > BIRTH_PLACE_MAX_INDEX
        if not late and len(line) <= SOFT_BIO_CHARS:
            return line, named
        candidates.append((late, len(line) > MAX_BIO_CHARS, len(candidates), line, named))
    # nothing within the soft limit: the first line that fits the hard one (with the
    # built-in pools there always is one), else the least bad line
    *_, line, named = min(candidates)
    return line, named


def generate_world(seed: Seed, config: WorldConfig = WorldConfig()) -> World:
    """Make the world for ``seed`` (an int or a string): same seed and config, same world."""
    _check_seed(seed)
    if not isinstance(config, WorldConfig):
        raise ValueError(f"config must be a WorldConfig, got {type(config).__name__}")
    rng = random.Random(seed)
    places = _make_places(rng, config.n_places)  # random order, so the rank is random too
    raw = [1.0 / (rank + 2) ** config.place_skew for rank in range(config.n_places)]
    weights = [w / math.fsum(raw) for w in raw]
    surnames = _make_surnames(rng, config.n_people, set(places) | set(FIRST_NAMES))

    splits = (["train"] * config.n_train + ["dev"] * config.n_dev + ["test"] * config.n_test
              + ["wiki_only"] * config.n_wiki_only)
    people = []
    for n, surname in enumerate(surnames):
        first = rng.choice(FIRST_NAMES)
        name = f"{first} {surname}"
        # drawn independently of the name: the name carries no hint of the place
        birth = rng.choices(places, weights=weights)[0]
        occupation = rng.choice(OCCUPATIONS)
        year = rng.randint(1850, 1935)  # later years stay before 2021
        # the first person always gets the question template: the vocabulary needs "?" and "W"
        templates = (QUESTION_TEMPLATE,) if n == 0 else _FIRST_TEMPLATES
        bio, others = _biography(rng, name, surname, birth, places, occupation, year,
                                 config.second_place_prob, templates)
        people.append([name, first, surname, birth, others, occupation, year, bio])
    rng.shuffle(people)
    people = tuple(Person(*fields[:7], split, fields[7]) for fields, split in zip(people, splits))
    wiki_lines = [p.biography for p in people]
    rng.shuffle(wiki_lines)
    return World(seed, config, tuple(places), tuple(weights), people, tuple(wiki_lines))


def _write_lines(path: Path, lines: list[str]) -> Path:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(line + "\n" for line in lines))
    return path


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _write_private(path: Path, lines: list[str]) -> Path:
    """Write a grader-only file: a new parent folder is made 0700 and the file 0600."""
    if not path.parent.is_dir():  # an existing folder (say /tmp) keeps its mode
        path.parent.mkdir(mode=0o700, parents=True)
        os.chmod(path.parent, 0o700)  # mkdir's mode is masked by the umask
    _write_lines(path, lines)
    os.chmod(path, 0o600)
    return path


def _summary(world: World) -> dict:
    return {
        "generator": "course_lib.world",
        "seed": world.seed,
        "config": asdict(world.config),
        "counts": {
            "people": len(world.people),
            **{split: len(world.split(split)) for split in SPLITS},
            "places": len(world.places),
            "wiki_lines": len(world.wiki_lines),
        },
    }


def write_world(out_dir: str | Path, seed: Seed, config: WorldConfig = WorldConfig(),
                answers_path: str | Path | None = None) -> dict[str, Path]:
    """Write the student files for ``seed`` into ``out_dir``; return file name -> path.

    The test answers (``birth_test.tsv``) go to ``answers_path`` only, with ``world.json``
    (which records the seed) beside them; without ``answers_path`` neither is written.
    """
    out = Path(out_dir)
    answers = Path(answers_path) if answers_path is not None else None
    if answers is not None and _inside(answers, out):
        raise ValueError(f"answers_path {answers} is inside the student folder {out}; put it somewhere private")
    student_files = [name for name in (WIKI, TRAIN, DEV, TEST_INPUTS) if answers is not None
                     and (answers.parent / name).exists()]
    if student_files:  # another world's student folder: its students would get these answers
        raise ValueError(f"answers_path {answers} is in a folder holding students' data ({', '.join(student_files)}); "
                         "put the answers somewhere private")
    world = generate_world(seed, config)
    out.mkdir(parents=True, exist_ok=True)

    def qa(split: str) -> list[str]:
        return [f"{p.question}\t{p.birth_place}" for p in world.split(split)]

    # grader-only files from an earlier write here would hand students the answers and the seed
    for stale in (TEST_ANSWERS, WORLD_RECORD):
        (out / stale).unlink(missing_ok=True)
    paths = {
        WIKI: _write_lines(out / WIKI, list(world.wiki_lines)),
        TRAIN: _write_lines(out / TRAIN, qa("train")),
        DEV: _write_lines(out / DEV, qa("dev")),
        TEST_INPUTS: _write_lines(out / TEST_INPUTS, [p.question for p in world.split("test")]),
    }
    if answers is not None:
        paths[TEST_ANSWERS] = _write_private(answers, qa("test"))
        summary = json.dumps(_summary(world), indent=2, sort_keys=True)
        paths[WORLD_RECORD] = _write_private(answers.parent / WORLD_RECORD, summary.splitlines())
    return paths
