"""`python -m prelabel_eval`: the node, as `python -m handler`, from any working folder."""

from . import _HANDLER  # the installed `handler`, loaded first by its location

if __name__ == "__main__":
    from handler.__main__ import main
    from handler.entry import leave

    assert _HANDLER.__name__ == "handler"
    leave(main())
