"""SWE-agent's classic windowed tools (open, goto, scroll_up/down, create, edit, insert, search_*, find_file,
submit), re-implemented so that old SWE-agent trajectories replay with the observations they recorded.

Behaviour follows rollout-fleet's windowed-tools spec for each SWE-agent release line; the line is chosen by
`ROLLOUT_FLEET_SWE_AGENT` (see state.py). Quirks are kept on purpose: they are part of what was recorded.
"""
