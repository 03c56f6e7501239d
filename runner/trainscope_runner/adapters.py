"""The user's implementations of the course's problems (attention, DDP, sharded optimizer, FSDP),
found the way the course's own tests find them: through the adapter functions of a checkout's
`tests/adapters.py`. `--code` names one of:

  - a course checkout (a folder with tests/adapters.py): its adapters, imported;
  - a Python file or module of adapter-named functions (`examples/wrong/ddp_not_averaged.py`,
    `mypkg.adapters`): that module stands for tests/adapters.py;
  - `module:Name` or `file.py:Name`: the class or callable itself, for the one problem a lab
    asks of it (an attention's autograd.Function, a DDP class, a sharded optimizer class).

An adapter whose body raises NotImplementedError is the course's "not done yet": NotDoneYet,
which a lab shows as such, never as a failure of the user's code."""

import inspect
import os
import sys

from .code import _checkout_paths, _import, _import_file, resolve_callable
from .protocol import UserError

# What each edition's tests/adapters.py defines for the systems assignment (see Note [two model
# tables] for the editions).
EDITION_2025 = ("get_ddp_individual_parameters", "ddp_individual_parameters_on_after_backward",
                "get_ddp_bucketed", "ddp_bucketed_on_after_backward", "ddp_bucketed_on_train_batch_start")
EDITION_2026 = ("get_ddp", "ddp_on_after_backward", "get_fsdp", "fsdp_on_after_backward",
                "fsdp_gather_full_params")
ATTENTION = ("get_flashattention_autograd_function_pytorch", "get_flashattention_autograd_function_triton")
SHARDED_OPTIMIZER = "get_sharded_optimizer"


class NotDoneYet(UserError):
    """An adapter that raises NotImplementedError: the student has not written it yet."""


class Adapters:
    """What `--code` names, imported: `module` (the adapters module, or the module that holds
    `obj`), `obj` (the named class or callable of the `module:Name` form, else None)."""

    def __init__(self, code, phase="import"):
        self.code = code
        self.form = ""    # "checkout", "module" or "callable"
        self.root = ""    # a checkout's folder
        self.module = None
        self.obj = None
        self.obj_name = ""
        if not code:
            raise UserError(phase, "no code given (--code: a course checkout, a file or module of "
                                   "adapter functions, or module:Name)")
        if os.path.isdir(code):
            self.form, self.root = "checkout", os.path.abspath(code)
            path = os.path.join(self.root, "tests", "adapters.py")
            if not os.path.isfile(path):
                raise UserError(phase, f"{self.root} is not a course checkout: it has no tests/adapters.py")
            for p in reversed(_checkout_paths(self.root)):
                if p not in sys.path:
                    sys.path.insert(0, p)
            self.module = _import_file(path, phase)
        elif ":" in code and not os.path.isfile(code):
            self.form = "callable"
            self.obj, self.obj_name = resolve_callable(code, phase)
            self.module = sys.modules.get(getattr(self.obj, "__module__", ""), None)
        elif code.endswith(".py") or os.sep in code:
            if not os.path.isfile(code):
                raise UserError(phase, f"'{code}' does not exist")
            self.form = "module"
            self.module = _import_file(code, phase)
        else:
            self.form = "module"
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            self.module = _import(code, phase)

    def where(self):
        """Where the adapters come from, for a person: 'tests/adapters.py of /path', 'x.py'."""
        if self.form == "checkout":
            return f"tests/adapters.py of {self.root}"
        if self.form == "callable":
            return self.obj_name
        return self.code

    def defines(self, name):
        return self.module is not None and callable(getattr(self.module, name, None))

    def edition(self):
        """'2025', '2026', 'both' or '' from the DDP and FSDP adapters the module defines."""
        old = any(self.defines(n) for n in EDITION_2025)
        new = any(self.defines(n) for n in EDITION_2026)
        return "both" if old and new else "2025" if old else "2026" if new else ""

    def function(self, name, phase):
        """The adapter `name`, or a UserError saying it is not there."""
        fn = getattr(self.module, name, None) if self.module is not None else None
        if not callable(fn):
            raise UserError(phase, f"{self.where()} has no {name}()")
        return fn

    def call(self, name, *args, phase, **kwargs):
        """Calls adapter `name`; NotDoneYet when it raises NotImplementedError, the user's
        error (with their traceback) for anything else it raises."""
        fn = self.function(name, phase)
        return call_user(fn, *args, phase=phase, what=f"{name}() in {self.where()}", **kwargs)

    def optional(self, name):
        """The adapter `name` when the module defines it, else None (a hook the course makes optional)."""
        fn = getattr(self.module, name, None) if self.module is not None else None
        return fn if callable(fn) else None


def call_user(fn, *args, phase, what, **kwargs):
    """Calls the user's `fn`; their exception becomes a UserError naming `what`, with their
    traceback; NotImplementedError becomes NotDoneYet."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError as e:
        raise NotDoneYet(phase, f"not done yet: {what} raises NotImplementedError") from e
    except Exception as e:
        raise UserError(phase, f"{what} raised {type(e).__name__}: {e}", e) from e


def describe(obj):
    """'module.Class' of a class or callable, for a person."""
    if obj is None:
        return ""
    target = obj if inspect.isclass(obj) or inspect.isfunction(obj) else type(obj)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"

