"""``cached_property`` for the evaluator SDK's views: computed once an instance, without a lock."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

_T = TypeVar("_T")


class cached_property(Generic[_T]):  # noqa: N801  (named after functools.cached_property)
    """``functools.cached_property`` without its lock (Python 3.11 takes an RLock on every first
    access; a trace computes dozens of these). The value is stored in the instance ``__dict__``,
    which then shadows the descriptor. An instance is only ever used by one thread at a time here."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> _T | cached_property[_T]:
        if instance is None:
            return self
        value = self.func(instance)
        instance.__dict__[self.attrname] = value
        return value
