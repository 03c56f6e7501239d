"""Puts examples/course-checkout on sys.path, so that the wrong variants beside this file can
build on its correct cs336_systems (TrainScope puts this folder on sys.path when it imports one
of them)."""

import os
import sys

CHECKOUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "course-checkout"))
if CHECKOUT not in sys.path:
    sys.path.insert(0, CHECKOUT)
