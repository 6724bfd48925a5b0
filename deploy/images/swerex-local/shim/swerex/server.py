"""`python3 -m swerex.server ARGS` runs `swerex-remote ARGS`, the SWE-ReX server installed in this image.

Any Python 3 can run this hand-over, so the start command works whatever `python3` comes first on PATH.
"""

import os
import sys

if __name__ == "__main__":
    os.execvp("swerex-remote", ["swerex-remote"] + sys.argv[1:])
