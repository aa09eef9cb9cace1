"""The ``evaluate`` module scripts: ``evaluate.load(evalkit.hf.module(NAME))`` loads one."""
