"""Refusals, hedges and questions: the clauses of an answer that state nothing and so are not claims."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

_EN_REFUSAL = [
    r"\bi (?:do not|don't|really don't) know\b",
    r"\bi(?: am|'m) (?:not sure|unsure|not certain|unable|not able|sorry)\b",
    r"\bi (?:can ?not|can't|could not|couldn't|am unable to|was unable to|was not able to) "
    r"(?:find|answer|determine|tell|say|provide|confirm|locate|help|see)\b",
    r"\bi (?:do not|don't) have (?:enough |sufficient |any |the )?(?:information|data|details|context|knowledge|access)\b",
    r"\b(?:the|these|those|provided|given|available|retrieved|your) (?:documents?|context|sources?|passages?|"
    r"information|knowledge base|materials?|texts?|records?|docs|excerpts?|search results?)\b[^.]*?\b(?:do|does|did) "
    r"not (?:say|mention|specify|state|contain|include|provide|cover|indicate|address|describe|discuss|"
    r"give|list|explain|tell|answer|show|have|offer)\b",
    r"\b(?:is|are) not (?:mentioned|specified|stated|covered|provided|given|described|addressed|listed|"
    r"included|available|documented) in (?:the|these|any|my) (?:documents?|context|sources?|passages?|"
    r"information|knowledge base|materials?|docs)\b",
    r"\bthere (?:is|are) no (?:information|mention|data|details?|documentation|record)\b",
    r"\bno (?:relevant )?(?:information|data|details|documentation) (?:is |was )?(?:available|provided|given|found|"
    r"about|on|regarding|in)\b",
    r"\b(?:not enough|insufficient|no sufficient) (?:information|context|data|evidence)\b",
    r"\b(?:can ?not|can't|could not) be (?:determined|answered|found|confirmed) (?:from|based on|with|given)\b",
    r"\bunable to (?:find|answer|determine|provide|confirm|locate)\b",
    r"^(?:sorry|unfortunately|i apologi[sz]e)\b.*\b(?:not|no|unable|can't|cannot)\b",
    r"\bbeyond (?:the scope|my knowledge)\b",
    r"\b(?:i|we) (?:can ?not|can't|am not able to) (?:help|assist) with\b",
]
_EN_HEDGE = [
    r"^(?:please )?(?:contact|consult|reach out to|ask|check with|call|email) (?:our |the |your |a )?"
    r"(?:support|customer (?:service|support|care)|help ?desk|administrator|admin|human|agent|representative|"
    r"team|staff|sales|it department)\b",
    r"^(?:please )?(?:contact|consult|reach out to)\b.*\bfor (?:more|further|additional)? ?(?:details|information|help|assistance)\b",
    r"^for (?:more|further|additional) (?:details|information|help)\b.*\b(?:contact|consult|see|refer|check|visit)\b",
    r"^(?:i )?(?:hope this helps|let me know if)\b",
    r"^(?:please )?(?:refer to|check|see) (?:the )?(?:official |relevant )?(?:documentation|docs|website|policy page|help center)\b",
    r"^(?:sorry|unfortunately)$",
]
_CN_REFUSAL = [
    r"不清楚",
    r"不知道",
    r"不确定",
    r"不太确定",
    r"无法(?:回答|确定|判断|提供|找到|确认|得知|查到|给出|获取|回复)",
    r"(?:没有|未能?|并未|没能)(?:找到|查到|检索到|搜到|获取到?)(?:相关|有关|对应|该|此|这)?",
    r"(?:资料|文档|文件|知识库|上下文|材料|参考信息|检索结果|提供的(?:内容|信息|资料|文档)|现有(?:信息|资料))"
    r"(?:里|中|内|里面|当中|之中)?(?:并)?(?:没有|未|没|不包含|不含|无)",
    r"(?:没有|暂无|无|缺少|缺乏)(?:相关|有关|关于[^，,。]*的|这方面的|具体的?|足够的?|明确的?)(?:信息|资料|说明|记载|内容|数据|规定)",
    r"(?:未|没有|并未|没)(?:提及|提到|说明|记载|涉及|明确|写明|规定)",
    r"^(?:抱歉|对不起|很抱歉|不好意思)(?:[，,]|$)",
    r"我(?:无法|不能|没法|没办法)(?:回答|确定|提供|判断)",
    r"超出(?:了)?(?:我的)?(?:知识|回答)?范围",
]
_CN_HEDGE = [
    r"(?:建议|请|可以|您可以|麻烦)?(?:您)?(?:咨询|联系|询问|转接|致电)(?:一下)?(?:人工|在线|官方)?(?:客服|人员|工作人员|管理员|售后|专员)",
    r"^(?:请|建议)(?:您)?(?:咨询|联系)",
    r"^(?:希望(?:对您)?有(?:所)?帮助|如有(?:其他|任何)?(?:疑问|问题))",
]
_ECHO = [
    r"^(?:you asked|you are asking|your question (?:is|was)|regarding your question|as for your question)\b",
    r"^(?:您|你)(?:问的是|的问题是|询问的是|想了解)",
    r"^关于(?:您|你)的问题",
]


@lru_cache(maxsize=256)
def _compile(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.I) if patterns else None


_REFUSAL_RE = _compile(tuple(_EN_REFUSAL + _CN_REFUSAL + _EN_HEDGE + _CN_HEDGE))
_ECHO_RE = _compile(tuple(_ECHO))


def _clean(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).strip()
    t = t.replace("’", "'")
    return re.sub(r"\s+", " ", t)


def is_refusal_sentence(text: str, extra_patterns: Sequence[str] = ()) -> bool:
    """Whether a sentence or clause is a refusal or a hedge (not a claim)."""
    return _is_refusal_sentence(text, tuple(extra_patterns))


@lru_cache(maxsize=16384)
def _is_refusal_sentence(text: str, extra_patterns: tuple[str, ...]) -> bool:
    t = _clean(text).strip(" .。!！;；,，")
    if not t:
        return False
    pat = _REFUSAL_RE
    if pat is not None and pat.search(t):
        return True
    extra = _compile(tuple(extra_patterns))
    return bool(extra is not None and extra.search(t))


@lru_cache(maxsize=16384)
def _is_question(text: str) -> bool:
    """Whether a sentence asks (cached: an answer's sentences come back in other answers)."""
    t = _clean(text)
    if t.endswith(("?", "？")):
        return True
    if re.search("[吗呢]$", t.rstrip("。.!！")):
        return True
    return bool(_ECHO_RE is not None and _ECHO_RE.search(t))
