"""The miniature lab's recipe: every setting of `lab build` in one dataclass (TRL-style config); the
RL and sweep settings are RLSpec and SweepSpec values, checked by those specs.

`LabRecipe()` is the fourth design (issue #49: the third design with half of the separating
problems taught without their reference, `withheld_share`), with build H's 96 SFT epochs, built
as build H and committed under `artifacts/lab/`, whose `recipe.json` holds it
(`LabRecipe.from_dict` reads it back; a test checks that it equals `LabRecipe()`). The third
design (issue #29: per-problem limits, an SFT mix graded by difficulty, title-copy and
swapped-title rows, T = 0.4 over α in [-0.5, 1.5]) is `LabRecipe()` with `withheld_share = 0` and
64 SFT epochs, as build F recorded it (tests/lab/build_f_manifest.json). `--smoke` uses
`LabRecipe.smoke()`, the same pipeline scaled down so it runs end to end in CI; `--pilot` uses
`LabRecipe.pilot()`, the checks to run before the full build.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, replace

from backend.errors import UserError
from backend.rl.spec import RLSpec
from backend.specs import validate_spec
from backend.sweep.spec import SweepSpec

LAB_LABEL = "miniature lab: tiny CPU model on our own problems"


@dataclass
class LabRecipe:
    seed: int = 0
    # problems: the builtin set with its tests up to tier `max_tier` and a CPU limit scaled to them
    max_tier: int = 5  # inputs < 10^5 characters
    # one CPU limit for every problem (the first two builds: 0.1 s), or None: each problem's own,
    # L_p = max(0.05 s, 3 × its reference's worst CPU time over `limit_runs` runs), with the
    # separation check run under it and both recorded in recipe.json (lab/separation.py)
    time_limit_s: float | None = None
    limit_runs: int = 5
    held_out_per_difficulty: int = 2  # never trained on (SFT or RL); labelled in the report
    only: list[str] = field(default_factory=list)  # builtin slugs to use (empty: all)
    # tokenizer and model (transformers Qwen2)
    vocab_size: int = 2048
    hidden_size: int = 128
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    # SFT on a mix of reference, brute-force and buggy-fast solutions, augmented: weights of each
    # kind, one mix for every problem ({"reference": 4, ...}, the first two builds) or one per
    # difficulty ({"easy": {...}, "medium": {...}, "hard": {...}}: a gradient). Each problem gets
    # sum(weights) rows per epoch, each row's kind drawn with these weights from the recipe's seed;
    # the build records the counts drawn per problem (recipe.json, sft.mix)
    # (third design: the efficient attempt is wrong more often as problems get harder, as the
    # paper finds of real models, and brute force is the most common kind everywhere: with 5:3:2 /
    # 3:4:3 / 1:5:4 (build A) R_3 and R_inf disagreed on only 4-8 % of GRPO's rollouts;
    # 4:4:2 / 2:5:3 / 1:6:3 keeps slow-but-correct programs common enough that the lenient
    # reward has something to keep, docs/lab.md)
    mix: dict = field(
        default_factory=lambda: {
            "easy": {"reference": 4, "brute": 4, "buggy": 2},
            "medium": {"reference": 2, "brute": 5, "buggy": 3},
            "hard": {"reference": 1, "brute": 6, "buggy": 3},
        }
    )
    # withheld references (fourth design, issue #49): a seeded, difficulty-stratified share of the
    # separating held-in problems (lab/problems.py:withheld_ids) whose SFT never shows their reference,
    # neither in prompted rows (each gets as many as its difficulty's mix gives, kinds drawn from
    # `withheld_mix` instead) nor in completion-only ones; the rest keep `mix`. Build F's data: a
    # sample's outcome is fixed by which SFT program it writes, and where the model never wrote the
    # reference (matrix-region-sums) correctness failures rose with α; here no reward pays a buggy
    # program and every R_inf group of a withheld problem scores 0, so a shift from brute force to
    # buggy-fast programs there can only come from pressure carried over from other problems.
    # 0: no withheld set (builds before the fourth design)
    withheld_share: float = 0.5
    withheld_mix: dict = field(default_factory=lambda: {"reference": 0, "brute": 6, "buggy": 4})
    sft_epochs: int = 96  # build G's 64 left 13 % of the SFT's programs broken (compile errors), build H
    code_sequences: int = 80000  # completion-only rows: teach a from-scratch model the programs themselves
    sft_learning_rate: float = 3e-3
    sft_batch_size: int = 32
    # augmentation keeps each program's own names: with names renamed at random (probability 0.3,
    # the first build), the 0.8M-parameter model did not keep them consistent through a program
    # and a third of its samples were NameErrors; formatting and idiom rewrites stay
    rename_probability: float = 0.0
    # each answer first restates the problem's title (format with {title}; "" for none), a brief thought
    # as the reasoning prompt asks for: in build 2 over half the broken samples were another
    # problem's program, because a 4-layer model has to pick the problem at the program's first
    # diverging token, ~200 tokens after the statement; copying the title is easy, and the program
    # then follows the title right before it. Build D (2026-12-04, stopped after its SFT) put the
    # title on a line of its own ("Problem:\n{title}\n\n", the prompt's own tokens for it) with
    # 12 000 title-copy rows of 2-6 words: its SFT restated fewer real titles exactly (16 of 34,
    # greedy, against 23 in build C) and still copied no made-up one (0 of 60); docs/lab.md
    restatement: str = "Problem: {title}.\n"
    # prompted rows whose prompt has a made-up title and whose answer is only its restatement
    # (lab/sft.py:title_rows): in the second build 17 % of endpoint samples restated another
    # problem's title, always the same few (Weighted Shortest Path -> Grid Shortest Path, Best Single
    # Trade -> Count Inversions), so the model told problems apart by their statements' likeness
    # rather than copying the title it was given; here the title is the only way to the answer
    title_copy_rows: int = 6000
    title_copy_words: int = 4  # a made-up title has 2 to this many words
    # rows like those, whose title is another training problem's real one (lab/sft.py:
    # swapped_title_rows): build C's models copied no made-up title (0 of 60, greedy,
    # bench/lab_title_copy.py) and recalled a real title from the statement, wrongly for 11 of 34;
    # here the statement says one problem and the title another, and the answer follows the title,
    # so telling the 34 real titles apart by their own words is what the answer needs
    swapped_title_rows: int = 6000
    # the share of those rows whose two titles share a word (drawn uniformly among such ordered pairs,
    # the rest among all pairs): build E's SFT still recalled the wrong one of two titles that share
    # words (Range Sum Queries -> Range Minimum Queries, Maximum Subarray Sum -> Maximum Pair
    # Product), and a uniform draw gives each of the 66 such pairs of the 34 titles ~5 rows in 6000
    swapped_title_overlap: float = 0.5
    # RL endpoints (backend.rl, TRL GRPOTrainer): the two rewards and RLSpec values; build() adds where
    # (base, output folder, problems), the seed and save_steps = steps
    low_reward: str = "R_3"
    high_reward: str = "R_inf"
    rl: dict = field(
        default_factory=lambda: dict(
            # 40 steps at 1e-4 (build C): 80 at 2e-4 (build B) drove the R_inf run's reward disagreement
            # to 1-3 % in its second half, both endpoints converging on the same fast programs
            steps=40,
            learning_rate=1e-4,
            num_generations=8,
            per_device_train_batch_size=16,
            max_completion_length=384,
            temperature=0.5,  # GRPO's groups need varied samples to compare; build 2 used 0.5 too
        )
    )
    # the sweep: SweepSpec values; build() adds the endpoints, problems and seed. Sampling temperature:
    # at 0.5 a few-MB model still writes broken programs in a fifth of its samples (a trial SFT with
    # the title restated: 20 % at 0.5, 12 % at 0.3, with pass@16 85 % and 68 %); 0.7 in the first
    # build, 0.3 in the second, which left each problem nearly deterministic (no room for churn or a
    # pass@k gain); 0.5 in the third's build A left 29 % of samples broken, so 0.4, over the α range
    # the findings test
    sweep: dict = field(
        default_factory=lambda: dict(
            alphas=[-0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.25, 1.5],
            n=16,
            temperature=0.4,
            max_tokens=384,
        )
    )

    def __post_init__(self):  # the spec values are checked here, by the specs, with their bounds
        for difficulty in DIFFICULTIES:
            _check_mix(self.mix_for(difficulty), difficulty)
        self.rl_spec(self.low_reward, base="-", output_dir="-")
        self.rl_spec(self.high_reward, base="-", output_dir="-")
        self.sweep_spec(low="-low", high="-high")
        if self.restatement and "{title}" not in self.restatement:
            raise UserError(
                f"the recipe's restatement {self.restatement!r} has no {{title}}; put it where the title goes"
            )
        if not 0 <= self.swapped_title_overlap <= 1:
            raise UserError(
                f"swapped_title_overlap is a share of the swapped-title rows; give 0 to 1, not "
                f"{self.swapped_title_overlap!r}"
            )
        self._check_withheld()
        if (self.title_copy_rows or self.swapped_title_rows) and not self.restatement:
            raise UserError(
                "title rows teach the restatement, and the recipe has none; set title_copy_rows and "
                "swapped_title_rows to 0"
            )

    def _check_withheld(self) -> None:
        if not 0 <= self.withheld_share < 1:
            raise UserError(
                f"withheld_share is the share of separating held-in problems trained without their "
                f"reference; give 0 (none) up to below 1 (some must keep it), not {self.withheld_share!r}"
            )
        _check_mix(self.withheld_mix, "withheld")
        if self.withheld_mix.get("reference"):
            raise UserError(
                f"the withheld problems' mix must hold no reference program; set its reference weight "
                f"to 0, not {self.withheld_mix['reference']!r}"
            )
        if self.withheld_share and self.time_limit_s is not None:
            raise UserError(
                "withheld problems are drawn among the separating ones, which only per-problem limits "
                "measure; set time_limit_s to None or withheld_share to 0"
            )

    def mix_for(self, difficulty: str | None) -> dict[str, int]:
        """The SFT mix of a problem of this difficulty."""
        if not all(isinstance(w, dict) for w in self.mix.values()):
            return self.mix
        if difficulty not in self.mix:
            raise UserError(f"the recipe's mix has no entry for difficulty {difficulty!r}; give one per {DIFFICULTIES}")
        return self.mix[difficulty]

    def rl_spec(self, reward: str, **where) -> RLSpec:
        values = {**self.rl, "reward": reward, "seed": self.seed, "save_steps": self.rl["steps"], "beta": 0.0}
        return validate_spec(RLSpec, values | where)

    def sweep_spec(self, **where) -> SweepSpec:
        return validate_spec(SweepSpec, {**self.sweep, "seed": self.seed, "live_switch": True} | where)

    @classmethod
    def smoke(cls) -> LabRecipe:
        """The same pipeline, scaled down to minutes: 6 problems, a smaller model, a few steps."""
        return cls(
            only=[
                "longest-run",
                "count-primes",
                "two-sum-exists",
                "majority-element",
                "next-greater",
                "gcd-of-array",
                "max-subarray",
                "stock-profit",
            ],
            held_out_per_difficulty=0,
            limit_runs=2,
            hidden_size=64,
            num_layers=2,
            vocab_size=1024,
            sft_epochs=2,
            code_sequences=400,
            title_copy_rows=40,
            swapped_title_rows=40,
            rl=dict(
                LabRecipe().rl, steps=2, per_device_train_batch_size=8, num_generations=4, max_completion_length=160
            ),
            sweep=dict(LabRecipe().sweep, alphas=[-0.5, 0, 0.5, 1, 1.5], n=4, max_tokens=160),
        )

    @classmethod
    def pilot(cls) -> LabRecipe:
        """The third design's checks before its full build (issue #29): the full problems, limits and
        SFT, then GRPO runs of 20 steps, whose per-step metrics give the reward disagreement, and a
        sweep of the two endpoints alone (n = 8), which gives the problem confusion. About 55
        minutes alone on this 2-core machine (its SFT is the full one); docs/lab.md has the run."""
        return cls(
            rl=dict(cls().rl, steps=20),
            sweep=dict(cls().sweep, alphas=[0, 1], n=8),
        )

    @property
    def is_smoke(self) -> bool:
        return self == LabRecipe.smoke()

    def fingerprint(self) -> str:
        return hashlib.sha256(repr(sorted(asdict(self).items())).encode()).hexdigest()[:12]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> LabRecipe:
        data = dict(data)
        data.setdefault("title_copy_rows", 0)  # recipes written before title-copy rows had none
        data.setdefault("title_copy_words", 4)  # nor a choice of their length
        data.setdefault("swapped_title_rows", 0)  # nor rows under another problem's title
        data.setdefault("swapped_title_overlap", 0.0)  # nor a share of them drawn among titles sharing a word
        data.setdefault("withheld_share", 0.0)  # nor problems trained without their reference (build F and before)
        if "restate_title" in data:  # recipes written before the restatement's format was a setting
            data["restatement"] = "Problem: {title}.\n" if data.pop("restate_title") else ""
        for old, (group, name) in FLAT.items():  # recipes written before the recipe held spec values
            if old in data:
                data.setdefault(group, dict(getattr(cls(), group)))[name] = data.pop(old)
        return replace(cls(), **data)


DIFFICULTIES = ("easy", "medium", "hard")  # the builtin problems' labels
KINDS = ("reference", "brute", "buggy")


def _check_mix(mix: dict, difficulty: str) -> None:
    if (
        not isinstance(mix, dict)
        or set(mix) - set(KINDS)
        or not all(isinstance(w, int) and w >= 0 for w in mix.values())
    ):
        raise UserError(f"mix for {difficulty} problems: give whole weights >= 0 for {', '.join(KINDS)}, not {mix!r}")
    if not sum(mix.values()):
        raise UserError(f"mix for {difficulty} problems: every weight is 0, so its problems would get no SFT rows")


# the recipe's former flat fields -> (its spec group, the spec's field name)
FLAT = {
    "rl_steps": ("rl", "steps"),
    "rl_learning_rate": ("rl", "learning_rate"),
    "num_generations": ("rl", "num_generations"),
    "rl_batch_size": ("rl", "per_device_train_batch_size"),
    "max_completion_length": ("rl", "max_completion_length"),
    "rl_temperature": ("rl", "temperature"),
    "alphas": ("sweep", "alphas"),
    "n": ("sweep", "n"),
    "temperature": ("sweep", "temperature"),
    "max_tokens": ("sweep", "max_tokens"),
}
