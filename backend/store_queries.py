"""The store's analysis inputs: per-experiment aggregates over evaluations, in SQL (a part of
backend/store.py's Store, kept apart from its connections, schema and entity access)."""

from __future__ import annotations

from dataclasses import dataclass

from backend.outcomes import OUTCOME_CLASSES, OutcomeClass, Verdict, counted_in_sql

SAMPLES_JOIN = "LEFT JOIN samples s USING (experiment_id, checkpoint_id, problem_id, sample_idx)"


@dataclass(frozen=True)
class SampleFilter:
    """Which of an experiment's samples an analysis counts (None: all), and the one rule of counting
    they share: the type `analyze` (AnalysisSpec.sample_filter()), the dashboard's sidebar and these
    queries take. Frozen, so the dashboard can key its cached views on it."""

    difficulty: str | None = None
    platform: str | None = None
    setting: str | None = None
    # the contest window, YYYY-MM-DD, both ends included (LiveCodeBench's own rule): a problem's
    # contest_date inside it; with either end set, a problem without a date is left out
    since: str | None = None
    until: str | None = None
    # not a filter of rows but a rule of counting, read by outcome_counts alone (the other queries
    # count by verdict or cause, not by class): a time or memory failure first failing below this
    # tier counts as a correctness failure
    opt_min_tier: int | None = None


EVERY_SAMPLE = SampleFilter()
# a stored contest_date is a date or a timestamp ("2024-03-02T00:00:00"): its day is what a window compares
CONTEST_DAY = "substr(p.contest_date, 1, 10)"


class AnalysisQueries:
    """Mixed into Store: every method reads through `self.connect(read_only=True)`."""

    def outcome_counts(self, experiment_id: str, where: SampleFilter = EVERY_SAMPLE):
        """One row per (checkpoint, problem): sample counts per outcome class, with the
        checkpoint's α/kind/label and the problem's difficulty/platform/title (a Polars frame).
        Sandbox errors are not the program's fault, so they count in no class and not in n
        (sandbox_errors counts them).
        where.opt_min_tier T: a time or memory failure first failing at tier < T counts as a correctness
        failure (a program too slow on a tiny input is stuck, not inefficient at scale)."""
        import polars as pl

        filters, params, joins = self._evaluation_filters(experiment_id, where)
        # counted first, then labelled: joining the checkpoint and problem rows to every sample
        # before grouping cost a third more CPU (5 M samples, docs/benchmarks.md), and the
        # checkpoints' own experiment_id made the setting filter's `USING (experiment_id, …)` ambiguous
        counts = ", ".join(
            f"count(*) FILTER (WHERE {counted_in_sql(c, opt_min_tier=where.opt_min_tier)})::INTEGER AS {c}"
            for c in OUTCOME_CLASSES
        )
        sql = f"""
            WITH counted AS (
                SELECT e.checkpoint_id, e.problem_id,
                       count(*)::INTEGER AS n,
                       {counts}
                FROM evaluations e
                {joins}
                WHERE {" AND ".join(filters)}
                GROUP BY e.checkpoint_id, e.problem_id
            )
            SELECT counted.*, c.alpha, c.kind, coalesce(c.label, counted.checkpoint_id) AS label,
                   p.difficulty, p.platform, coalesce(p.title, counted.problem_id) AS title
            FROM counted
            LEFT JOIN checkpoints c ON c.id = counted.checkpoint_id
            LEFT JOIN problems p ON p.id = counted.problem_id
            ORDER BY counted.checkpoint_id, counted.problem_id
        """
        with self.connect(read_only=True) as con:
            return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())

    def experiment_stamp(self, experiment_id: str) -> tuple[int, int]:
        """(rows, fingerprint) of an experiment's evaluations: changes when a row lands, goes or is
        judged again, so a read model keyed by it follows a running sweep and is kept while nothing changes."""
        sql = """SELECT count(*), coalesce(bit_xor(hash(checkpoint_id, problem_id, sample_idx, outcome)), 0)
                 FROM evaluations WHERE experiment_key = md5_number_lower(?) AND experiment_id = ?"""
        with self.connect(read_only=True) as con:
            rows, fingerprint = con.execute(sql, [experiment_id, experiment_id]).fetchone()
        return int(rows), int(fingerprint)

    def sandbox_errors(self, experiment_id: str, where: SampleFilter = EVERY_SAMPLE):
        """Per checkpoint, its samples whose verdict is a sandbox error (the judge's fault: left out
        of every count and every n above, and reported here so nothing leaves in silence), labelled,
        as a Polars frame; a checkpoint with none has no row."""
        import polars as pl

        filters, params, joins = self._evaluation_filters(experiment_id, where, sandbox_errors=True)
        sql = f"""
            WITH counted AS (
                SELECT e.checkpoint_id, count(*)::INTEGER AS sandbox_errors
                FROM evaluations e
                {joins}
                WHERE {" AND ".join(filters)}
                GROUP BY e.checkpoint_id
            )
            SELECT counted.checkpoint_id, coalesce(c.label, counted.checkpoint_id) AS label, c.alpha,
                   counted.sandbox_errors
            FROM counted
            LEFT JOIN checkpoints c ON c.id = counted.checkpoint_id
            ORDER BY c.alpha NULLS LAST, coalesce(c.label, counted.checkpoint_id)
        """
        with self.connect(read_only=True) as con:
            return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())

    @staticmethod
    def _evaluation_filters(
        experiment_id: str, where: SampleFilter, samples_joined: bool = False, sandbox_errors: bool = False
    ) -> tuple[list[str], list, str]:
        """WHERE terms, their parameters and the joins they need (problems `p`, samples `s`, unless
        the query joins its samples itself) for evaluations `e` of one experiment: no filter, no join.
        Judged samples only, or with `sandbox_errors` only the sandbox errors."""
        judged = f"e.outcome {'=' if sandbox_errors else '<>'} '{OutcomeClass.SANDBOX_ERROR}'"
        filters = ["e.experiment_key = md5_number_lower(?)", "e.experiment_id = ?", judged]
        params = [experiment_id, experiment_id]
        terms = {"p.difficulty": where.difficulty, "p.platform": where.platform, "s.setting": where.setting}
        for column, value in terms.items():
            if value:
                filters.append(f"{column} = ?")
                params.append(value)
        for bound, value in ((">=", where.since), ("<=", where.until)):
            if value:  # NULL compares to nothing: a problem without a date is outside every window
                filters.append(f"{CONTEST_DAY} {bound} ?")
                params.append(value)
        by_problem = where.difficulty or where.platform or where.since or where.until
        joins = ["LEFT JOIN problems p ON p.id = e.problem_id"] if by_problem else []
        if where.setting and not samples_joined:
            joins.append(SAMPLES_JOIN)
        return filters, params, " ".join(joins)

    def problem_dates(self, experiment_id: str, where: SampleFilter = EVERY_SAMPLE) -> dict:
        """The experiment's judged problems under the filters but its window: how many have a contest
        date, how many have none (a window leaves those out), and the first and last date."""
        unwindowed = SampleFilter(difficulty=where.difficulty, platform=where.platform, setting=where.setting)
        filters, params, joins = self._evaluation_filters(experiment_id, unwindowed)
        if "problems p" not in joins:
            joins += " LEFT JOIN problems p ON p.id = e.problem_id"
        sql = f"""
            SELECT count(DISTINCT e.problem_id) FILTER (WHERE p.contest_date IS NOT NULL)::INTEGER,
                   count(DISTINCT e.problem_id) FILTER (WHERE p.contest_date IS NULL)::INTEGER,
                   min({CONTEST_DAY}), max({CONTEST_DAY})
            FROM evaluations e {joins}
            WHERE {" AND ".join(filters)}
        """
        with self.connect(read_only=True) as con:
            dated, undated, first, last = con.execute(sql, params).fetchone()
        return {"dated": dated, "undated": undated, "first": first, "last": last}

    def format_causes(self, experiment_id: str, where: SampleFilter = EVERY_SAMPLE):
        """Per (checkpoint, problem): judged samples, format failures by cause — cut at the token
        limit (finish_reason 'length'), else a program that does not compile (verdict CE), else no
        code at all — and the completions' token counts (sum and number counted), as a Polars frame."""
        import polars as pl

        filters, params, joins = self._evaluation_filters(experiment_id, where, samples_joined=True)
        fmt = f"e.outcome = '{OutcomeClass.FORMAT_FAILURE}'"
        cut = f"{fmt} AND s.finish_reason = 'length'"
        uncut = f"{fmt} AND NOT coalesce({cut}, false)"
        sql = f"""
            SELECT e.checkpoint_id, e.problem_id, count(*)::INTEGER AS n,
                   count(*) FILTER (WHERE {cut})::INTEGER AS truncated,
                   count(*) FILTER (WHERE {uncut} AND e.verdict = '{Verdict.CE}')::INTEGER
                       AS compile_error,
                   count(*) FILTER (WHERE {uncut} AND e.verdict IS DISTINCT FROM '{Verdict.CE}')::INTEGER
                       AS no_code,
                   coalesce(sum(s.completion_tokens), 0)::BIGINT AS tokens,
                   count(s.completion_tokens)::INTEGER AS with_tokens
            FROM evaluations e
            {joins}
            {SAMPLES_JOIN}
            WHERE {" AND ".join(filters)}
            GROUP BY e.checkpoint_id, e.problem_id
        """
        with self.connect(read_only=True) as con:
            return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())

    def optimization_tiers(self, experiment_id: str, where: SampleFilter = EVERY_SAMPLE):
        """Per checkpoint, its judged samples and its optimization failures by first failing tier
        (tier k: the failing input is shorter than 10^k characters), as a Polars frame."""
        import polars as pl

        filters, params, joins = self._evaluation_filters(experiment_id, where)
        opt = f"e.outcome = '{OutcomeClass.OPTIMIZATION_FAILURE}'"
        tiers = ", ".join(
            f"count(*) FILTER (WHERE {opt} AND e.first_failing_tier = {k})::INTEGER AS tier_{k}" for k in range(1, 7)
        )
        beyond = "e.first_failing_tier IS NULL OR e.first_failing_tier > 6"
        sql = f"""
            WITH counted AS (
                SELECT e.checkpoint_id, count(*)::INTEGER AS n,
                       {tiers},
                       count(*) FILTER (WHERE {opt} AND ({beyond}))::INTEGER AS tier_other
                FROM evaluations e
                {joins}
                WHERE {" AND ".join(filters)}
                GROUP BY e.checkpoint_id
            )
            SELECT counted.checkpoint_id, coalesce(c.label, counted.checkpoint_id) AS label, c.alpha,
                   counted.* EXCLUDE (checkpoint_id)
            FROM counted
            LEFT JOIN checkpoints c ON c.id = counted.checkpoint_id
            ORDER BY c.alpha NULLS LAST, coalesce(c.label, counted.checkpoint_id)
        """
        with self.connect(read_only=True) as con:
            return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())
