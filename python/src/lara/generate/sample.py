"""One generated sample: the latent simulation and the tables built from it.

The bad-row injection and the planted truth read it; the table families
never do (each gets only the latent pieces it draws from).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lara.generate.actions import Actions
from lara.generate.config import Clock, GeneratorConfig
from lara.generate.labels import LabelBatch
from lara.generate.output import GeneratedTable
from lara.generate.sessions import Population, Turns


@dataclass
class Sample:
    cfg: GeneratorConfig
    clock: Clock
    population: Population
    turns: Turns
    actions: Actions
    tables: dict[str, GeneratedTable]  # in TABLES order
    relevance_labels: LabelBatch
    prompt_labels: LabelBatch
    goal_labels: LabelBatch
    spanned: np.ndarray  # per prompt index: has stage spans
    replay_latent: dict[str, Any] | None  # None without replay tables
