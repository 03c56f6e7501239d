"""TrainScope's Python runner: puts the user's own PyTorch code on TrainScope's bench.

The engine starts `python -m trainscope_runner COMMAND --spec JSON` with the interpreter the
user names; the runner imports the user's code, runs the lab's experiment and writes one JSON
object a line on stdout (protocol.py). It needs `torch` alone (2.4 or newer) and nothing of
TrainScope's own: copy this folder anywhere on PYTHONPATH and it runs.
"""

__version__ = "1"
