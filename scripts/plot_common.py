"""Shared by the plot scripts: reading their tables (CSV or JSON) with every column checked, and
saving a figure as PNG and PDF.

Only /usr/bin/python3 sees Debian's python3-matplotlib (docs/design.md section 8), so the scripts
name that interpreter; import_pyplot() says what to install when matplotlib is missing.
"""

import csv
import json
import math
import os
import sys


class TableError(Exception):
    """A table the plots cannot use; the message names the file, line and column."""


def import_pyplot():
    """matplotlib.pyplot with the file-only backend, or exit 2 saying how to get it."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: files only
        import matplotlib.pyplot as pyplot
    except ImportError:
        sys.exit(
            f"{os.path.basename(sys.argv[0])}: matplotlib is not importable by {sys.executable}; "
            "install Debian's python3-matplotlib (apt-get install -y python3-matplotlib, or "
            "scripts/install-deps.sh) and run this script with /usr/bin/python3"
        )
    return pyplot


def _number(text, where, column, integer):
    try:
        value = float(text)
    except ValueError:
        raise TableError(f"{where}: column '{column}' is '{text}', which is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise TableError(f"{where}: column '{column}' is {text}; it must be finite and not negative")
    if integer:
        if value != int(value):
            raise TableError(f"{where}: column '{column}' is {text}, which is not a whole number")
        return int(value)
    return value


def read_rows(path, text_columns, number_columns, integer_columns=(), optional=None):
    """The rows of a CSV (header line; lines starting with # skipped) or of a JSON file (a list of
    objects, or an object whose "rows" is one) as dicts, with number columns converted.

    Every column in text_columns, number_columns and integer_columns is required; `optional`
    maps further columns to their default. Raises TableError naming the file, line (CSV) or row
    (JSON) and column.
    """
    optional = optional or {}
    required = list(text_columns) + list(number_columns) + list(integer_columns)
    try:
        with open(path, newline="") as file:
            if path.endswith(".json"):
                document = json.load(file)
                rows = document.get("rows") if isinstance(document, dict) else document
                if not isinstance(rows, list):
                    raise TableError(f"{path}: expected a list of rows or an object with 'rows'")
                records = [(f"{path}: row {index + 1}", row) for index, row in enumerate(rows)]
                columns = None
            else:
                lines = [(number, line) for number, line in enumerate(file, start=1)
                         if line.strip() and not line.lstrip().startswith("#")]
                if not lines:
                    raise TableError(f"{path}: no header line; the table needs {', '.join(required)}")
                reader = csv.reader([line for _, line in lines])
                columns = [name.strip() for name in next(reader)]
                records = []
                for (number, _), fields in zip(lines[1:], reader):
                    where = f"{path}:{number}"
                    if len(fields) != len(columns):
                        raise TableError(
                            f"{where}: {len(fields)} fields, but the header has {len(columns)}")
                    records.append((where, dict(zip(columns, (f.strip() for f in fields)))))
    except OSError as error:
        raise TableError(f"{path}: cannot read ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise TableError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None

    if columns is not None:
        for column in required:
            if column not in columns:
                raise TableError(f"{path}: the header has no '{column}' column "
                                 f"(it has: {', '.join(columns)})")
    if not records:
        raise TableError(f"{path}: no rows")
    return read_rows_from_records(records, text_columns, number_columns, integer_columns, optional)


def read_rows_from_records(records, text_columns, number_columns, integer_columns=(),
                           optional=None):
    """read_rows for records already read: (where, dict) pairs, `where` naming line or row."""
    optional = optional or {}
    required = list(text_columns) + list(number_columns) + list(integer_columns)
    result = []
    for where, record in records:
        if not isinstance(record, dict):
            raise TableError(f"{where}: not an object")
        row = {}
        for column in required:
            if column not in record:
                raise TableError(f"{where}: no '{column}' column")
        for column in text_columns:
            row[column] = str(record[column])
            if not row[column]:
                raise TableError(f"{where}: column '{column}' is empty")
        for column in number_columns:
            row[column] = _number(str(record[column]), where, column, integer=False)
        for column in integer_columns:
            row[column] = _number(str(record[column]), where, column, integer=True)
        for column, default in optional.items():
            value = record.get(column, default)
            row[column] = default if value in ("", None) else _number(
                str(value), where, column, integer=isinstance(default, int))
        row["where"] = where
        result.append(row)
    return result


def save(figure, prefix):
    """Writes PREFIX.png and PREFIX.pdf and returns their paths."""
    directory = os.path.dirname(prefix)
    if directory:
        os.makedirs(directory, exist_ok=True)
    paths = [prefix + ".png", prefix + ".pdf"]
    figure.savefig(paths[0], dpi=150, bbox_inches="tight")
    figure.savefig(paths[1], bbox_inches="tight")
    for path in paths:
        print(f"wrote {path}")
    return paths


def fail(message):
    sys.exit(f"{os.path.basename(sys.argv[0])}: {message}")
