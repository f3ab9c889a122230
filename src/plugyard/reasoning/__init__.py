"""Reasoning flows: the MRP-VM typed families (DS003, DS027) run by a planner, every
stage an executor call (docs/reasoning.md)."""

from plugyard.reasoning.result import Reasoned
from plugyard.reasoning.service import ReasoningService

__all__ = ["Reasoned", "ReasoningService"]
