"""One exception tree for the whole toolkit.

::

    AifabricError                 base; never raised itself
    ├── InputError                exit 2: the user's input is wrong
    │   ├── UnitError             "400" where a unit is required, "400GB/s" for a link speed
    │   ├── FabricFileError       a fabric/catalog YAML file: names file, line and field
    │   ├── CatalogError          unknown hardware model; lists the known ones
    │   └── DesignError           parameters that no fabric can satisfy
    └── EnvironmentProblem        exit 3: the machine lacks something (a tool, root)

Every message quotes the bad value, states what was expected and, where one exists, the fix.
The CLI prints ``str(error)`` as one line on stderr and exits with ``error.exit_code``: no
traceback ever reaches a user for these.
"""

from __future__ import annotations

__all__ = [
    "AifabricError",
    "CatalogError",
    "DesignError",
    "EnvironmentProblem",
    "FabricFileError",
    "InputError",
    "UnitError",
]


class AifabricError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code: int = 1


class InputError(AifabricError):
    """Bad usage or bad input (exit code 2)."""

    exit_code = 2


class UnitError(InputError):
    """A quantity without a unit, with an unknown unit, or with an ambiguous one."""


class FabricFileError(InputError):
    """A YAML file that does not parse or does not validate.

    ``file``, ``line`` (1-based, ``None`` when unknown) and ``field`` (a dotted path such as
    ``links[3].speed_gbps``) locate the problem; ``str()`` renders all of them in one line.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.detail = message
        where = file or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        prefix = f"{where}: " if file or line is not None else ""
        if field:
            prefix += f"{field}: "
        super().__init__(prefix + message)


class CatalogError(InputError):
    """An unknown or invalid hardware catalog entry."""


class DesignError(InputError):
    """Design parameters that cannot produce a fabric (for example more leaves than a spine has
    ports in a two-tier design that was forced with ``--tiers 2``)."""


class EnvironmentProblem(AifabricError):
    """The environment lacks something: a tool, a package, root (exit code 3)."""

    exit_code = 3
