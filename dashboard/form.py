"""Streamlit form widgets derived from a spec's fields (backend/specs.py): label, default, bounds,
choices and help come from the field, so a new spec option appears in the form with no edit here;
a launch's error about one field (backend/errors.py FieldError) appears below that field's widget."""

from __future__ import annotations

import typing

import streamlit as st
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from backend.alpha import alpha_text
from backend.errors import FieldError
from backend.specs import bounds, bounds_text, extra, form_label, help_text, literal_choices, ordered_fields, unwrap

UNSET = object()


def remember_error(form: str, err: FieldError) -> None:
    """Keep a launch's error about one field for the rerun that draws it at the field: the button
    that launched sits below every widget, which are drawn by then."""
    st.session_state[f"{form}-field-error"] = {"field": err.field, "message": str(err)}


def forget_error(form: str) -> None:
    st.session_state.pop(f"{form}-field-error", None)


def field_error(container, form: str | None, name: str) -> None:
    """The form's last launch error about field `name`, right below its widget, on the rerun after
    the launch alone, as an error under the button lasts: a rule may involve other fields (a batch
    and the group size), so after any change the error may no longer hold."""
    err = st.session_state.get(f"{form}-field-error") if form else None
    if err and err["field"] == name:
        container.error(err["message"])
        forget_error(form)


def widget(container, name: str, field: FieldInfo, key: str, value=UNSET, form: str | None = None):
    """One field's widget, showing `value` (a stored spec's) or else the field's default; returns
    the value the spec takes (None where the field's None is meant). `form` names the form whose
    launch errors about this field appear below the widget."""
    chosen = _input(container, name, field, key, value)
    field_error(container, form, name)
    return chosen


def _input(container, name: str, field: FieldInfo, key: str, value):
    base, optional = unwrap(field.annotation)
    label, help_ = form_label(name, field), help_text(field) + bounds_text(field)
    default = None if field.is_required() else field.get_default(call_default_factory=True)
    default = default if value is UNSET else value
    none_word = extra(field).get("none")
    choices = literal_choices(field) or extra(field).get("choices")
    if choices:
        options = [None, *choices] if optional else list(choices)
        index = options.index(default) if default in options else 0
        return container.selectbox(
            label,
            options,
            index=index,
            key=key,
            help=help_,
            format_func=lambda v: none_word or "none" if v is None else str(v),
        )
    if base is bool:
        return container.checkbox(label, value=bool(default), key=key, help=help_)
    if base in (int, float):
        return _number(container, base, label, field, default, optional, none_word, key, help_)
    if extra(field).get("text"):  # a list typed as text, such as the α grid
        text = ", ".join(map(alpha_text, default)) if isinstance(default, list) else str(default or "")
        return container.text_input(label, text, key=key, help=help_)
    if typing.get_origin(base) is list:
        text = container.text_area(f"{label}, one per line", "\n".join(map(str, default or [])), key=key, help=help_)
        return [line.strip() for line in text.splitlines() if line.strip()]
    text = container.text_input(label, "" if default is None else str(default), key=key, help=help_).strip()
    return text or (None if optional else text)


def _number(container, base, label, field, default, optional, none_word, key, help_):
    # Bounds go to the spec, which says in one line what is wrong: a widget minimum would silently
    # replace a typed 0 with the minimum and launch that.
    b = bounds(field)
    if optional:  # 0 stands for None: "(0 = all)"
        value = container.number_input(
            f"{label} (0 = {none_word or 'none'})",
            min_value=base(0),
            max_value=base(b["le"]) if "le" in b else None,
            value=base(default or 0),
            key=key,
            help=help_,
        )
        return value or None
    step = 1 if base is int else (0.01 if abs(default or 0) >= 0.01 or not default else float(default))
    fmt = "%.2e" if base is float and default and abs(default) < 1e-3 else None
    return container.number_input(label, value=base(default), step=base(step), key=key, help=help_, format=fmt)


def spec_widgets(
    model: type[BaseModel],
    key: str,
    only: list[str] | None = None,
    skip: tuple[str, ...] = (),
    columns: int = 4,
    values: dict | None = None,
    form: str | None = None,
) -> dict:
    """Widgets for the spec's form fields in `columns` columns: {field: value}, showing `values`
    (a stored spec) where given and `form`'s launch errors at their fields. `only` picks and orders
    fields; fields marked form=False, and those in `skip`, are left to the page."""
    values = values or {}
    fields = dict(ordered_fields(model))
    names = only or [n for n, f in fields.items() if extra(f).get("form", True) is not False and n not in skip]
    cols = st.columns(columns)
    return {
        name: widget(cols[i % columns], name, fields[name], f"{key}-{name}", values.get(name, UNSET), form)
        for i, name in enumerate(names)
    }
