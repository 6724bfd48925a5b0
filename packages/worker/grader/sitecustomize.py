"""rollout-fleet's grader start-up hook: on the grading sandbox's PYTHONPATH for the test command only.

With RF_CHANNEL_MODE=unittest it installs the result channel's unittest hook (rf_result_channel.py) before the
test runner imports anything of the repository. Under pytest (RF_CHANNEL_MODE=pytest) it does nothing: the
channel is loaded as a plugin there. Standard library only.
"""

import os

if os.environ.get("RF_CHANNEL_MODE") == "unittest" and os.environ.get("RF_CHANNEL"):
    try:
        import rf_result_channel

        rf_result_channel.install_unittest_hook()
    except Exception:  # noqa: BLE001 - a broken hook must not break the tests; the channel is then missing
        pass
