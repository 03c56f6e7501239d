"""Finding the user's code: `module:callable`, `path/to/file.py:callable`, or a course checkout
(a folder with the `cs336_basics` package and `tests/adapters.py`)."""

import importlib
import importlib.util
import inspect
import os
import sys

from .protocol import UserError

# The course's model constructor, in its order.
MODEL_ARGS = ("vocab_size", "context_length", "d_model", "num_layers", "num_heads", "d_ff", "rope_theta")


class Found:
    """What `--code` names, resolved: a model factory, an optimizer factory, and what to say about them."""

    def __init__(self):
        self.form = ""            # "checkout" or "callable"
        self.root = ""            # the checkout's folder
        self.model_name = ""      # "cs336_basics.model.BasicsTransformerLM"
        self.model_factory = None
        self.optimizer_name = ""
        self.optimizer_factory = None
        self.adapters = {}        # name -> "implemented" | "not implemented"
        self.notes = []


def _checkout_paths(root):
    """The folders a course checkout's packages are imported from: the checkout itself and, as the
    assignment lays it out, its cs336-basics/ subfolder."""
    paths = [root]
    for sub in ("cs336-basics", "cs336_basics_pkg"):
        p = os.path.join(root, sub)
        if os.path.isdir(os.path.join(p, "cs336_basics")):
            paths.insert(0, p)
    return paths


def _import(module, phase):
    try:
        return importlib.import_module(module)
    except Exception as e:  # the user's import error, with their traceback
        raise UserError(phase, f"importing {module} failed: {type(e).__name__}: {e}", e) from e


def _import_file(path, phase):
    name = "trainscope_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)  # its own imports of its neighbours work
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(phase, f"{path} cannot be imported as a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        raise UserError(phase, f"importing {path} failed: {type(e).__name__}: {e}", e) from e
    return mod


def resolve_callable(ref, phase):
    """`module:attr.attr` or `path/file.py:attr` → (the object, a readable name)."""
    if ":" not in ref:
        raise UserError(phase, f"'{ref}' is neither a folder nor module:callable (or file.py:callable)")
    where, _, attr = ref.rpartition(":")
    if not where or not attr:
        raise UserError(phase, f"'{ref}': expected module:callable or path/file.py:callable")
    if where.endswith(".py") or os.sep in where:
        if not os.path.isfile(where):
            raise UserError(phase, f"'{where}' does not exist (from '{ref}')")
        mod = _import_file(where, phase)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        mod = _import(where, phase)
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UserError(phase, f"{where} has no '{attr}'")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UserError(phase, f"{ref} is a {type(obj).__name__}, not a callable")
    return obj, f"{where}:{attr}"


def call_with_config(fn, config, phase, what):
    """Calls the user's factory with the point's configuration as keyword arguments; a factory
    that takes fewer gets only those it names (unless it takes **kwargs)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        params = None
    if params is None or any(p.kind == p.VAR_KEYWORD for p in params):
        kwargs = dict(config)
    else:
        names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        kwargs = {k: v for k, v in config.items() if k in names}
    try:
        return fn(**kwargs)
    except Exception as e:
        raise UserError(phase, f"{what} raised {type(e).__name__}: {e}", e) from e


ADAPTERS_2025 = ("get_flashattention_autograd_function_pytorch", "get_flashattention_autograd_function_triton",
                 "get_ddp_individual_parameters", "get_ddp_bucketed", "get_sharded_optimizer")
ADAPTERS_2026 = ("get_ddp", "get_fsdp", "fsdp_gather_full_params")


def _adapters(root):
    """Which of the course's adapter functions tests/adapters.py defines (read, not imported:
    importing it imports the whole assignment)."""
    return adapter_states(os.path.join(root, "tests", "adapters.py"))


def adapter_states(path):
    """The course's adapter functions a file defines, each "implemented" or "not implemented"
    (a body that only raises NotImplementedError), read without importing it."""
    if not path or not os.path.isfile(path):
        return {}
    import ast
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError) as e:
        return {"(tests/adapters.py does not parse)": str(e)}
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith(("get_", "ddp_", "fsdp_")):
            body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(getattr(n, "value", None), ast.Constant))]
            todo = len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.dump(body[0])
            found[node.name] = "not implemented" if todo else "implemented"
    return found


def find(code, optimizer=""):
    """Resolves `--code` (and `--optimizer`) into a Found, without building anything."""
    f = Found()
    if not code:
        raise UserError("import", "no code given (--code module:callable, file.py:callable or a checkout folder)")
    if os.path.isdir(code):
        f.form = "checkout"
        f.root = os.path.abspath(code)
        for p in reversed(_checkout_paths(f.root)):
            if p not in sys.path:
                sys.path.insert(0, p)
        if importlib.util.find_spec("cs336_basics") is None:
            raise UserError("import", f"{f.root} is not a course checkout: no cs336_basics package in it "
                                      "(nor in its cs336-basics/ folder)")
        model_mod = _import("cs336_basics.model", "import")
        cls = getattr(model_mod, "BasicsTransformerLM", None)
        if cls is None:
            raise UserError("import", "cs336_basics.model has no BasicsTransformerLM")
        f.model_factory, f.model_name = cls, "cs336_basics.model.BasicsTransformerLM"
        f.adapters = _adapters(f.root)
        if not optimizer:
            try:
                opt_mod = importlib.import_module("cs336_basics.optimizer")
                if hasattr(opt_mod, "AdamW"):
                    f.optimizer_factory, f.optimizer_name = opt_mod.AdamW, "cs336_basics.optimizer.AdamW"
            except Exception as e:  # said, then torch's AdamW
                f.notes.append(f"cs336_basics.optimizer did not import ({type(e).__name__}: {e}); "
                               "using torch.optim.AdamW")
    else:
        f.form = "callable"
        f.model_factory, f.model_name = resolve_callable(code, "import")
    if optimizer:
        f.optimizer_factory, f.optimizer_name = resolve_callable(optimizer, "import")
    if f.optimizer_factory is None:
        import torch
        f.optimizer_factory, f.optimizer_name = torch.optim.AdamW, "torch.optim.AdamW"
    return f


def build_model(found, config):
    import torch
    model = call_with_config(found.model_factory, config, "construct", found.model_name)
    if not isinstance(model, torch.nn.Module):
        raise UserError("construct", f"{found.model_name} returned a {type(model).__module__}.{type(model).__name__}, "
                                     "not a torch.nn.Module")
    return model


def build_optimizer(found, model, lr):
    import torch
    try:
        opt = found.optimizer_factory(model.parameters(), lr=lr)
    except Exception as e:
        raise UserError("construct", f"{found.optimizer_name} raised {type(e).__name__}: {e}", e) from e
    if not isinstance(opt, torch.optim.Optimizer) and not hasattr(opt, "step"):
        raise UserError("construct", f"{found.optimizer_name} returned a {type(opt).__name__}, not an optimizer")
    return opt
