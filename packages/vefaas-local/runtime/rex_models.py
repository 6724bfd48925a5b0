"""Request models of SWE-ReX 1.4 and a small validator that answers like FastAPI + pydantic v2.

Wire contract (swerex-protocol.md §4): unknown fields are ignored, defaults fill missing fields,
discriminators (`session_type`, `action_type`) must be present. Failures become 422 bodies of the form
{"detail": [{"type", "loc", "msg", "input", "ctx"?}, ...]}.
"""

REQUIRED = object()

_TRUE_STRINGS = {"1", "on", "t", "true", "y", "yes"}
_FALSE_STRINGS = {"0", "off", "f", "false", "n", "no"}


def _err(type_, loc, msg, input_, ctx=None):
    e = {"type": type_, "loc": list(loc), "msg": msg, "input": input_}
    if ctx is not None:
        e["ctx"] = ctx
    return e


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _v_str(v, loc, errors):
    if isinstance(v, str):
        return v
    errors.append(_err("string_type", loc, "Input should be a valid string", v))
    return None


def _v_bool(v, loc, errors):
    if isinstance(v, bool):
        return v
    if _is_number(v) and v in (0, 1):
        return bool(v)
    if isinstance(v, str):
        low = v.strip().lower()
        if low in _TRUE_STRINGS:
            return True
        if low in _FALSE_STRINGS:
            return False
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        errors.append(_err("bool_parsing", loc, "Input should be a valid boolean, unable to interpret input", v))
    else:
        errors.append(_err("bool_type", loc, "Input should be a valid boolean", v))
    return None


def _v_float(v, loc, errors):
    if _is_number(v):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            errors.append(_err("float_parsing", loc, "Input should be a valid number, unable to parse string as a number", v))
            return None
    errors.append(_err("float_type", loc, "Input should be a valid number", v))
    return None


def _v_int(v, loc, errors):
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, float):
        if v.is_integer():
            return int(v)
        errors.append(_err("int_from_float", loc, "Input should be a valid integer, got a number with a fractional part", v))
        return None
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            errors.append(_err("int_parsing", loc, "Input should be a valid integer, unable to parse string as an integer", v))
            return None
    errors.append(_err("int_type", loc, "Input should be a valid integer", v))
    return None


def _v_str_list(v, loc, errors):
    if not isinstance(v, list):
        errors.append(_err("list_type", loc, "Input should be a valid list", v))
        return None
    out = []
    for i, item in enumerate(v):
        out.append(_v_str(item, list(loc) + [i], errors))
    return out


def _v_optional(inner):
    def validate(v, loc, errors):
        return None if v is None else inner(v, loc, errors)

    return validate


def _v_str_map(v, loc, errors):
    if not isinstance(v, dict):
        errors.append(_err("dict_type", loc, "Input should be a valid dictionary", v))
        return None
    return {k: _v_str(item, list(loc) + [k], errors) for k, item in v.items()}


def _v_command(v, loc, errors):
    # `str | list[str]`: pydantic reports one error per union member, tagged with the member's name.
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return v
    sub = []
    _v_str(v, list(loc) + ["str"], sub)
    _v_str_list(v, list(loc) + ["list[str]"], sub)
    errors.extend(sub)
    return None


def _literal(*choices):
    expected = ", ".join(repr(c) for c in choices[:-1]) + " or " + repr(choices[-1]) if len(choices) > 1 else repr(choices[0])

    def validate(v, loc, errors):
        if v in choices and isinstance(v, str):
            return v
        errors.append(_err("literal_error", loc, "Input should be " + expected, v, {"expected": expected}))
        return None

    return validate


STR, BOOL, FLOAT, INT = _v_str, _v_bool, _v_float, _v_int
OPT_FLOAT, OPT_STR, OPT_STR_MAP = _v_optional(_v_float), _v_optional(_v_str), _v_optional(_v_str_map)
STR_LIST, COMMAND = _v_str_list, _v_command

CREATE_BASH_SESSION = [
    ("startup_source", STR_LIST, []),
    ("session", STR, "default"),
    ("session_type", _literal("bash"), "bash"),
    ("startup_timeout", FLOAT, 1.0),
]
BASH_ACTION = [
    ("command", STR, REQUIRED),
    ("session", STR, "default"),
    ("timeout", OPT_FLOAT, None),
    ("is_interactive_command", BOOL, False),
    ("is_interactive_quit", BOOL, False),
    ("check", _literal("silent", "raise", "ignore"), "raise"),
    ("error_msg", STR, ""),
    ("expect", STR_LIST, []),
    ("action_type", _literal("bash"), "bash"),
]
BASH_INTERRUPT_ACTION = [
    ("session", STR, "default"),
    ("timeout", FLOAT, 0.2),
    ("n_retry", INT, 3),
    ("expect", STR_LIST, []),
    ("action_type", _literal("bash_interrupt"), "bash_interrupt"),
]
CLOSE_BASH_SESSION = [
    ("session", STR, "default"),
    ("session_type", _literal("bash"), "bash"),
]
COMMAND_MODEL = [
    ("command", COMMAND, REQUIRED),
    ("timeout", OPT_FLOAT, None),
    ("shell", BOOL, False),
    ("check", BOOL, False),
    ("error_msg", STR, ""),
    ("env", OPT_STR_MAP, None),
    ("cwd", OPT_STR, None),
    ("merge_output_streams", BOOL, False),
]
READ_FILE = [("path", STR, REQUIRED), ("encoding", OPT_STR, None), ("errors", OPT_STR, None)]
WRITE_FILE = [("content", STR, REQUIRED), ("path", STR, REQUIRED)]

# Discriminated unions: (discriminator field, {tag: model}).
CREATE_SESSION_UNION = ("session_type", {"bash": CREATE_BASH_SESSION})
CLOSE_SESSION_UNION = ("session_type", {"bash": CLOSE_BASH_SESSION})
ACTION_UNION = ("action_type", {"bash": BASH_ACTION, "bash_interrupt": BASH_INTERRUPT_ACTION})


class Model(object):
    """Validated request: attribute access to fields."""

    def __init__(self, values):
        self.__dict__.update(values)


def validate_model(fields, data, loc):
    """Returns (Model or None, errors)."""
    errors = []
    if not isinstance(data, dict):
        errors.append(_err("model_attributes_type", loc, "Input should be a valid dictionary or object to extract fields from", data))
        return None, errors
    values = {}
    for name, validator, default in fields:
        if name not in data:
            if default is REQUIRED:
                errors.append(_err("missing", list(loc) + [name], "Field required", data))
            else:
                values[name] = list(default) if isinstance(default, list) else default
            continue
        values[name] = validator(data[name], list(loc) + [name], errors)
    return (None, errors) if errors else (Model(values), [])


def validate_union(union, data, loc):
    field, members = union
    tags = ", ".join(repr(t) for t in members)
    if not isinstance(data, dict):
        return None, [_err("model_attributes_type", loc, "Input should be a valid dictionary or object to extract fields from", data)]
    if field not in data:
        msg = "Unable to extract tag using discriminator " + repr(field)
        return None, [_err("union_tag_not_found", loc, msg, data, {"discriminator": repr(field)})]
    tag = data[field]
    if not isinstance(tag, str) or tag not in members:
        msg = "Input tag {} found using {} does not match any of the expected tags: {}".format(repr(str(tag)), repr(field), tags)
        ctx = {"discriminator": repr(field), "tag": str(tag), "expected_tags": tags}
        return None, [_err("union_tag_invalid", loc, msg, data, ctx)]
    model, errors = validate_model(members[tag], data, list(loc) + [tag])
    return model, errors


def model_dump(fields, model):
    return {name: getattr(model, name) for name, _v, _d in fields}
