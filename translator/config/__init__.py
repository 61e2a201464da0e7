"""The typed configuration (schema.py), read from YAML and `--set` (load.py), and the
differences between two configs (diff.py). Reading a config loads no torch."""

from translator.config.diff import config_changes, describe_changes, flatten
from translator.config.load import config_from_dict, load_config, save_config
from translator.config.schema import (
    SCHEDULES,
    SPLIT_FILE,
    Config,
    CorpusConfig,
    DataConfig,
    DecodeConfig,
    SplitFiles,
    TokenizerConfig,
    TrainConfig,
)
from translator.config.words import type_words

__all__ = [
    "SCHEDULES",
    "SPLIT_FILE",
    "Config",
    "CorpusConfig",
    "DataConfig",
    "DecodeConfig",
    "SplitFiles",
    "TokenizerConfig",
    "TrainConfig",
    "config_changes",
    "config_from_dict",
    "describe_changes",
    "flatten",
    "load_config",
    "save_config",
    "type_words",
]
