"""File › Open benchmark… / Open predictions…: a form generated from the kind's argparse arguments.

The form asks for exactly what ``kind.add_arguments`` declares (files, folders, lists of
files, flags, choices); the result is an argv list parsed by the same parser, so what the
GUI opens is what ``masklens score KIND argv…`` scores. Prediction arguments (dest contains
"pred") are optional here: a benchmark can be opened without predictions.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from masklens.core.errors import MasklensError
from masklens.core.scoring.contract import BenchmarkKind, get_kind, kind_names


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise MasklensError(message)


def is_prediction_arg(action: argparse.Action) -> bool:
    return "pred" in action.dest.lower()


def kind_parser(kind: BenchmarkKind, *, predictions_optional: bool = True,
                all_optional: bool = False) -> _Parser:
    """The kind's argument parser (errors raise MasklensError instead of exiting)."""
    parser = _Parser(prog=f"masklens score {kind.name}", add_help=False)
    kind.add_arguments(parser)
    for a in parser._actions:
        if all_optional or (predictions_optional and is_prediction_arg(a)):
            a.required = False
    return parser


def file_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def parse_kind_args(kind: BenchmarkKind, argv: list[str]) -> argparse.Namespace:
    return kind_parser(kind).parse_args(argv)


def has_predictions(kind: BenchmarkKind, ns: argparse.Namespace) -> bool:
    return any(is_prediction_arg(a) and getattr(ns, a.dest, None) for a in file_actions(kind_parser(kind)))


#: words for the arguments' destinations; others are spelled from the dest ("pred_dir" → "Pred dir")
FIELD_WORDS = {
    "ann": "Annotations", "gt": "Ground truth", "pred": "Predictions", "images": "Images folder",
    "data": "Data file", "root": "Base folder", "pred_dir": "Predictions folder",
}


def field_label(action: argparse.Action) -> str:
    """The form's label of an argument, in words (the CLI flag is in its tooltip)."""
    return FIELD_WORDS.get(action.dest, action.dest.replace("_", " ").capitalize())


def field_tooltip(action: argparse.Action) -> str:
    flag = action.option_strings[-1] if action.option_strings else action.dest
    return f"{action.help or ''} (the {flag} of `masklens score`)".strip()


def missing_paths(fields: list[Field]) -> list[str]:
    """A sentence per path entered that does not exist (or is a file where a folder is wanted)."""
    from pathlib import Path

    out = []
    for f in fields:
        if isinstance(f.widget, (QCheckBox, QComboBox)):
            continue
        text = f.widget.edit.text()
        for value in [v.strip() for v in text.split(";") if v.strip()]:
            p = Path(value).expanduser()
            if _is_dir(f.action) and not p.is_dir():
                out.append(f"{field_label(f.action)}: no folder {value}")
            elif not _is_dir(f.action) and not p.exists():
                out.append(f"{field_label(f.action)}: no file {value}")
    return out


def _is_dir(action: argparse.Action) -> bool:
    text = f"{action.dest} {action.metavar or ''} {action.help or ''}".lower()
    return any(w in text for w in ("dir", "folder", "root"))


def _is_multi(action: argparse.Action) -> bool:
    return isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*")


class PathField(QWidget):
    """A path field: its line edit and a Browse… button (:func:`_path_widget`)."""

    def __init__(self, edit: QLineEdit) -> None:
        super().__init__()
        self.edit = edit


@dataclass
class Field:
    action: argparse.Action
    widget: QCheckBox | QComboBox | PathField

    def argv(self) -> list[str]:
        a, w = self.action, self.widget
        flag = a.option_strings[-1] if a.option_strings else None
        if isinstance(w, QCheckBox):
            return [flag] if w.isChecked() and flag else []
        text = w.currentText() if isinstance(w, QComboBox) else w.edit.text()
        values = [v.strip() for v in text.split(";") if v.strip()] if _is_multi(a) else (
            [text.strip()] if text.strip() else [])
        if not values:
            return []
        if flag is None:
            return values
        if isinstance(a, argparse._AppendAction):
            return [x for v in values for x in (flag, v)]
        return [flag, *values]


def _path_widget(action: argparse.Action, predictions_multi: bool = False) -> PathField:
    """A path field with Browse…; ``predictions_multi``: a prediction field taking several files
    (each becomes its own layer), Browse… appends."""
    edit = QLineEdit()
    box = PathField(edit)
    many = _is_multi(action) or (predictions_multi and is_prediction_arg(action))
    what = ("one or more files (a layer each), separated by ;" if predictions_multi and many
            else "folder" if _is_dir(action) else "files, separated by ;" if many else "file")
    edit.setPlaceholderText(f"{action.help} — {what}" if action.help else what)
    browse = QPushButton("Browse…")

    def pick() -> None:
        title = action.help or action.dest
        if _is_dir(action):
            path = QFileDialog.getExistingDirectory(box, title)
            picked = [path] if path else []
        elif many:
            picked, _ = QFileDialog.getOpenFileNames(box, title)
        else:
            path, _ = QFileDialog.getOpenFileName(box, title)
            picked = [path] if path else []
        if picked:
            current = [v for v in edit.text().split(";") if v.strip()] if predictions_multi else []
            edit.setText(";".join(current + picked))

    browse.clicked.connect(pick)
    lay = QHBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.addWidget(edit, 1)
    lay.addWidget(browse)
    return box


class OpenDialog(QDialog):
    """Choose a kind, fill its arguments; ``result_argv()`` is the argv for its parser."""

    def __init__(self, parent: QWidget | None = None, *, kind: str | None = None,
                 predictions_only: bool = False, preset: dict[str, str] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open predictions" if predictions_only else "Open benchmark")
        self.predictions_only = predictions_only
        self.kinds = QComboBox()
        for name in kind_names():
            try:
                k = get_kind(name)
            except (ImportError, MasklensError):
                continue
            self.kinds.addItem(f"{k.title or name} ({name})", name)
        if kind:
            self.kinds.setCurrentIndex(max(0, self.kinds.findData(kind)))
        self.kinds.setEnabled(not predictions_only)
        self.form_host = QWidget()
        self.form = QFormLayout(self.form_host)
        self.error = QLabel("")
        self.error.setStyleSheet("color: #D55E00;")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.kinds)
        lay.addWidget(self.form_host)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.fields: list[Field] = []
        self.preset = dict(preset or {})
        self.kinds.currentIndexChanged.connect(self._build)
        self._build()
        self.resize(640, self.sizeHint().height())

    def kind(self) -> BenchmarkKind:
        return get_kind(self.kinds.currentData())

    def _build(self, *_: object) -> None:
        self.error.setText("")  # nothing is wrong before the user has tried to open
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = []
        if self.kinds.currentData() is None:
            return
        for a in file_actions(kind_parser(self.kind())):
            if self.predictions_only and not is_prediction_arg(a):
                continue
            if isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
                w: QCheckBox | QComboBox | PathField = QCheckBox(a.help or "")
            elif a.choices:
                w = QComboBox()
                w.addItems([str(c) for c in a.choices])
            else:
                w = _path_widget(a, self.predictions_only)
                if a.dest in self.preset:
                    w.edit.setText(self.preset[a.dest])
            required = a.required and not is_prediction_arg(a)
            label = field_label(a) + (" (required)" if required else "")
            w.setToolTip(field_tooltip(a))
            self.form.addRow(label, w)
            lbl = self.form.labelForField(w)
            if lbl is not None:
                lbl.setToolTip(field_tooltip(a))
            self.fields.append(Field(a, w))

    def set_value(self, dest: str, text: str) -> None:
        for f in self.fields:
            if f.action.dest == dest:
                if isinstance(f.widget, QComboBox):
                    f.widget.setCurrentText(text)
                elif isinstance(f.widget, QCheckBox):
                    f.widget.setChecked(bool(text))
                else:
                    f.widget.edit.setText(text)

    def values(self) -> dict[str, str]:
        """Every field's text by its argument (``set_value`` gives them back)."""
        out = {}
        for f in self.fields:
            if isinstance(f.widget, QComboBox):
                out[f.action.dest] = f.widget.currentText()
            elif isinstance(f.widget, QCheckBox):
                out[f.action.dest] = "1" if f.widget.isChecked() else ""
            else:
                out[f.action.dest] = f.widget.edit.text()
        return out

    def prediction_argvs(self) -> list[list[str]]:
        """One argv per prediction file entered (``a.json;b.json`` → two layers); a kind whose
        prediction argument takes several files at once (append / nargs) gets them together."""
        out = []
        for f in self.fields:
            if not is_prediction_arg(f.action) or isinstance(f.widget, (QCheckBox, QComboBox)):
                continue
            text = f.widget.edit.text()
            values = [v.strip() for v in text.split(";") if v.strip()]
            flag = f.action.option_strings[-1] if f.action.option_strings else None
            if _is_multi(f.action):
                if values:
                    out.append(f.argv())
            else:
                out.extend([flag, v] if flag else [v] for v in values)
        return out

    def result_argv(self) -> list[str]:
        return [x for f in self.fields for x in f.argv()]

    def _accept(self) -> None:
        problems = missing_paths(self.fields)
        if problems:
            self.error.setText("; ".join(problems))
            return
        if self.predictions_only:
            self.accept()
            return
        try:
            parse_kind_args(self.kind(), self.result_argv())
        except MasklensError as exc:
            self.error.setText(self._in_words(str(exc)))
            return
        self.accept()

    def _in_words(self, message: str) -> str:
        """The parser's message with each flag also named as its field, e.g. "--ann (Annotations)"."""
        for f in self.fields:
            for flag in f.action.option_strings:
                message = message.replace(flag, f"{flag} ({field_label(f.action)})")
        return message
