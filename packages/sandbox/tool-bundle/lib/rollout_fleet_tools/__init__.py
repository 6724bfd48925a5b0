"""In-sandbox tools of rollout-fleet (str_replace_editor, execute_bash).

Python 3.8+, standard library only: this package runs inside arbitrary SWE-bench images.
"""
