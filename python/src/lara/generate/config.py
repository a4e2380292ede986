"""The generator's parameters (:class:`GeneratorConfig`) and run-wide settings."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from lara.generate.arrays import DAY_US, US
from lara.generate.schema import ROLES
from lara.generate.vocabulary import ASSETS_PER_TOPIC, REPLAY_POOL
from lara.paths import whole_number_setting


@dataclass
class GeneratorConfig:
    """All tunable parameters of the sample generator (defaults in brackets).

    Output
        sessions [10_000]: client sessions with >= 1 prompt (cross-session
        export sessions come on top). days [7]: days over which sessions
        start. seed [42]. fmt ['parquet']: 'parquet' | 'jsonl' | 'mixed'.
        gzip [False]: JSON Lines files as ``.jsonl.gz``. bad_rows [False]:
        inject malformed / duplicate / conflicting rows. replay [True]: write
        the replay tables. start_date ['2026-08-01'].

    Population
        users_per_session [0.4]: user pool size / sessions (users return;
        activity is Zipf-skewed by user_activity_skew [1.0]).
        synthetic_share [0.03] of sessions are synthetic (is_synthetic true on
        all their prompts), from synthetic_users [20] bot users.
        is_synthetic_null_share [0.10] of non-synthetic prompts have a null
        is_synthetic (means false).
        template_to_assistant_ratio [8.0]: template_search sessions per
        assistant session. chat_share_of_assistant [0.55]: assistant sessions
        that are chat (rest editor_assistant).
        prompts_mean_chat [2.65], prompts_mean_editor [1.30],
        prompts_mean_template [3.0]: prompts per session (1 + Poisson);
        assistant overall ~2.04.
        legacy_share [0.05]: expected share of sessions (hence retrievals)
        logged by the legacy client: null retrieval_role, no
        source_retrieval_id, null prompt_kind; concentrated in the first days
        (weight exp(-day / legacy_decay_days [1.5])).
        prompt_kind_null_share [0.03] (on top of legacy sessions),
        prompt_text_null_share [0.05], query_text_null_share [0.02].

    Planner routing (assistant prompts)
        intent_rate_chat [0.12], intent_rate_editor [0.05]: latent
        has_retrieval_intent. missed_rate [0.35]: intent prompts that trigger
        nothing. misroute_rate [0.005]: no-intent prompts that trigger one
        retrieval. multi_intent_rate [0.06]: intent prompts with 2 (or, 20%
        of them, 3) intents, one retrieval per intent when not missed.

    Rewrites (per surface: chat, editor_assistant, template_search)
        research_prob [(0.55, 0.45, 0.65)]: next prompt is a re-search
        (``rewrite`` with a new retrieval of a similar query, within 600 s)
        when the previous prompt's retrievals were not used.
        correction_prob [(0.72, 0.45, 0.25)]: next prompt is a downstream
        correction (``rewrite``, "make it bluer") after a used retrieval or a
        prompt without retrieval. follow_up_prob [(0.12, 0.10, 0.0)].

    Retrievals
        role_mix_chat [(.30, .15, .15, .20, .12, .08)], role_mix_editor
        [(.20, .10, .30, .20, .12, .08)], role_mix_template
        [(.60, .35, 0, 0, .03, .02)]: role shares in ROLES order (find,
        browse, operate, generation_reference, task_step, context_dependent);
        a re-search keeps the role of the retrieval it repeats.
        good_prob_by_role [(.75, .70, .70, .65, .60, .55)]:
        latent quality. empty_rate [0.015]. list_len_template [(12, 36)],
        list_len_assistant [(10, 30)] (inclusive ranges).
        repeated_id_rate [0.003]: lists with one repeated asset id.
        topic_skew [0.8], asset_start_p [0.08]: popularity skew of topics and
        of assets within a topic.

    Template-search behaviour
        click_mean_good [1.4], click_mean_bad [0.6] (Poisson clicks per grid,
        rank ~ geometric(click_rank_p [0.3])), select_prob_good [0.55],
        select_prob_bad [0.15], place_prob [0.7], user_edit_prob [0.5],
        asset_download_prob [0.1].

    Assistant behaviour
        acr_prob_good [0.7], acr_prob_bad [0.35], acr_prob_misroute [0.1]:
        agent consumes a returned asset (agent place, + agent edit with
        agent_edit_prob [0.5]). substitution_prob [0.5]: for find/operate
        retrievals that are bad and not consumed, the agent places an asset
        NOT in the list. generative_place_prob [0.3]: same for other roles
        (not a failure there). display_prob_consumed [0.5],
        display_prob_unconsumed [0.85]: a few assets shown to the user.
        assistant_click_prob [0.35], assistant_select_prob_good [0.3],
        assistant_select_prob_bad [0.1], user_place_after_select [0.6],
        follow_up_action_prob [0.12], user_edit_agent_placed [0.45],
        reject_prob_good [0.05], reject_prob_bad [0.35],
        reject_with_source_share [0.6], agent_generative_edit_prob [0.7] and
        user_doc_edit_prob [0.2] (prompts without retrieval).

    Outcomes
        export_prob_with_placement [0.35], export_prob_without_placement
        [0.2]: document-level export/share/download at the end of the
        session. cross_session_export_prob [0.3]: non-legacy, non-synthetic
        sessions with a retrieval placement get a later editor session
        (new session_guid, null prompt_id) 1..cross_session_max_days [3] days
        later exporting the same document_id.

    Labels
        relevance_label_share [0.2] of non-empty retrievals, judged on the top
        relevance_k [10] with coverage relevance_coverage [0.92], plus an
        unreturned relevant asset with unreturned_relevant_prob [0.15];
        human_judge_share [0.15] of batches judged by humans;
        double_judge_prob [0.1]: the other judge kind also grades the pair;
        rejudge_prob [0.08]: the same kind re-grades later.
        prompt_label_max [300], prompt_label_frac [0.05] of assistant prompts,
        prompt_label_intent_share [0.5] of the sample drawn from prompts with
        intent or a retrieval, prompt_label_human_prob [0.25],
        prompt_label_llm_error [0.08]. goal_label_share [0.1] of
        retrieval-turn prompts. stage_span_coverage [0.9] of assistant
        prompts.

    Replay
        replay_trajectories [None -> max(50, sessions // 20)], replay_steps
        [(3, 8)], replay_docs_per_step [(2, 5)], replay_relevant_share [0.3],
        replay_rho [-0.03]: target Spearman(CTU, SRU) (Gaussian copula),
        proxy_rho [0.05]: target Spearman(CTU, proxy), proxy_sru_rho [0.6],
        proxy_null_share [0.1], replay_failure_share [0.03], replay_turn_cap
        [100], oer_p_discriminative [0.4], oer_p_non_discriminative [0.1],
        replay_shared_entities [(3, 6)], replay_unique_entities [(1, 3)],
        replay_shared_entity_doc_prob [0.4].

    Bad rows
        bad_rows_per_kind [2] per reason and table where it applies;
        exact_duplicates_per_table [2]; conflicts_per_table [2];
        unnormalised_enums_per_table [2] (valid enum values with odd case or
        spaces, e.g. ``" Chat "``, in good rows). All four apply only with
        ``bad_rows=True``; without it every written row is clean.
    """

    sessions: int = 10_000
    days: int = 7
    seed: int = 42
    fmt: str = "parquet"
    gzip: bool = False
    bad_rows: bool = False
    replay: bool = True
    start_date: str = "2026-08-01"
    # population
    users_per_session: float = 0.4
    user_activity_skew: float = 1.0
    synthetic_share: float = 0.03
    synthetic_users: int = 20
    is_synthetic_null_share: float = 0.10
    template_to_assistant_ratio: float = 8.0
    chat_share_of_assistant: float = 0.55
    prompts_mean_chat: float = 2.65
    prompts_mean_editor: float = 1.30
    prompts_mean_template: float = 3.0
    legacy_share: float = 0.05
    legacy_decay_days: float = 1.5
    prompt_kind_null_share: float = 0.03
    prompt_text_null_share: float = 0.05
    query_text_null_share: float = 0.02
    # routing
    intent_rate_chat: float = 0.12
    intent_rate_editor: float = 0.05
    missed_rate: float = 0.35
    misroute_rate: float = 0.005
    multi_intent_rate: float = 0.06
    # rewrites (chat, editor_assistant, template_search)
    research_prob: tuple[float, float, float] = (0.55, 0.45, 0.65)
    correction_prob: tuple[float, float, float] = (0.72, 0.45, 0.25)
    follow_up_prob: tuple[float, float, float] = (0.12, 0.10, 0.0)
    # retrievals
    role_mix_chat: tuple[float, ...] = (0.30, 0.15, 0.15, 0.20, 0.12, 0.08)
    role_mix_editor: tuple[float, ...] = (0.20, 0.10, 0.30, 0.20, 0.12, 0.08)
    role_mix_template: tuple[float, ...] = (0.60, 0.35, 0.0, 0.0, 0.03, 0.02)
    good_prob_by_role: tuple[float, ...] = (0.75, 0.70, 0.70, 0.65, 0.60, 0.55)
    empty_rate: float = 0.015
    list_len_template: tuple[int, int] = (12, 36)
    list_len_assistant: tuple[int, int] = (10, 30)
    repeated_id_rate: float = 0.003
    topic_skew: float = 0.8
    asset_start_p: float = 0.08
    # template behaviour
    click_mean_good: float = 1.4
    click_mean_bad: float = 0.6
    click_rank_p: float = 0.3
    select_prob_good: float = 0.55
    select_prob_bad: float = 0.15
    place_prob: float = 0.7
    user_edit_prob: float = 0.5
    asset_download_prob: float = 0.1
    # assistant behaviour
    acr_prob_good: float = 0.7
    acr_prob_bad: float = 0.35
    acr_prob_misroute: float = 0.1
    agent_edit_prob: float = 0.5
    substitution_prob: float = 0.5
    generative_place_prob: float = 0.3
    display_prob_consumed: float = 0.5
    display_prob_unconsumed: float = 0.85
    assistant_click_prob: float = 0.35
    assistant_select_prob_good: float = 0.3
    assistant_select_prob_bad: float = 0.1
    user_place_after_select: float = 0.6
    follow_up_action_prob: float = 0.12
    user_edit_agent_placed: float = 0.45
    reject_prob_good: float = 0.05
    reject_prob_bad: float = 0.35
    reject_with_source_share: float = 0.6
    agent_generative_edit_prob: float = 0.7
    user_doc_edit_prob: float = 0.2
    # outcomes
    export_prob_with_placement: float = 0.35
    export_prob_without_placement: float = 0.2
    cross_session_export_prob: float = 0.3
    cross_session_max_days: int = 3
    # labels
    relevance_label_share: float = 0.2
    relevance_k: int = 10
    relevance_coverage: float = 0.92
    unreturned_relevant_prob: float = 0.15
    human_judge_share: float = 0.15
    double_judge_prob: float = 0.1
    rejudge_prob: float = 0.08
    prompt_label_max: int = 300
    prompt_label_frac: float = 0.05
    prompt_label_intent_share: float = 0.5
    prompt_label_human_prob: float = 0.25
    prompt_label_llm_error: float = 0.08
    goal_label_share: float = 0.1
    stage_span_coverage: float = 0.9
    # replay
    replay_trajectories: int | None = None
    replay_steps: tuple[int, int] = (3, 8)
    replay_docs_per_step: tuple[int, int] = (2, 5)
    replay_relevant_share: float = 0.3
    replay_rho: float = -0.03
    proxy_rho: float = 0.05
    proxy_sru_rho: float = 0.6
    proxy_null_share: float = 0.1
    replay_failure_share: float = 0.03
    replay_turn_cap: int = 100
    oer_p_discriminative: float = 0.4
    oer_p_non_discriminative: float = 0.1
    replay_shared_entities: tuple[int, int] = (3, 6)
    replay_unique_entities: tuple[int, int] = (1, 3)
    replay_shared_entity_doc_prob: float = 0.4
    # bad rows
    bad_rows_per_kind: int = 2
    exact_duplicates_per_table: int = 2
    conflicts_per_table: int = 2
    unnormalised_enums_per_table: int = 2

    def validate(self) -> None:
        """Raise ValueError on inconsistent parameters."""
        if self.sessions < 1:
            raise ValueError("sessions must be >= 1")
        if self.days < 1:
            raise ValueError("days must be >= 1")
        if self.fmt not in ("parquet", "jsonl", "mixed"):
            raise ValueError("fmt must be 'parquet', 'jsonl' or 'mixed'")
        _dt.date.fromisoformat(str(self.start_date))
        for name in ("role_mix_chat", "role_mix_editor", "role_mix_template"):
            mix = np.asarray(getattr(self, name), dtype=float)
            if mix.shape != (len(ROLES),) or mix.min() < 0 or mix.sum() <= 0:
                raise ValueError(f"{name} must be {len(ROLES)} non-negative shares")
        for name in ("list_len_template", "list_len_assistant"):
            lo, hi = getattr(self, name)
            if not (1 <= lo <= hi <= ASSETS_PER_TOPIC - 30):
                raise ValueError(f"{name} out of range")
        lo, hi = self.replay_steps
        dlo, dhi = self.replay_docs_per_step
        if not (2 <= lo <= hi and 1 <= dlo <= dhi and hi * dhi <= REPLAY_POOL):
            raise ValueError(f"replay_steps * replay_docs_per_step must be <= {REPLAY_POOL}")
        for name in ("replay_rho", "proxy_rho", "proxy_sru_rho"):
            if not -1 < getattr(self, name) < 1:
                raise ValueError(f"{name} must be in (-1, 1)")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GeneratorConfig:
        """Build from a dict (e.g. the manifest's ``parameters``)."""
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in names}
        return cls(**kw)


#: parallelism (environment variable LARA_GENERATE_THREADS overrides it): with n >= 2,
#: stages that do not depend on each other run in n - 1 worker threads beside the main
#: thread, and files are written by n threads while the simulation goes on; 1 = stage
#: by stage with synchronous writes (least memory). The output is the same for any n.
THREADS = 2


def thread_count() -> int:
    """Threads of a run: LARA_GENERATE_THREADS (a whole number >= 1), else THREADS."""
    text = os.environ.get("LARA_GENERATE_THREADS") or str(THREADS)
    return whole_number_setting("LARA_GENERATE_THREADS", text)


@dataclass(frozen=True)
class Clock:
    """The time base of a run: day 0 is ``start_date`` (UTC)."""

    start: _dt.date
    base_us: int  # microseconds since the epoch at 00:00 UTC of day 0

    @classmethod
    def of(cls, cfg: GeneratorConfig) -> Clock:
        start = _dt.date.fromisoformat(str(cfg.start_date))
        epoch = _dt.datetime(start.year, start.month, start.day, tzinfo=_dt.UTC)
        return cls(start, int(epoch.timestamp()) * US)

    def day_of(self, ts_us: np.ndarray) -> np.ndarray:
        """Day index (partition) of timestamps in microseconds."""
        return ((ts_us - self.base_us) // DAY_US).astype(np.int64)
