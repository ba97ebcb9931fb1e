"""course_lib: what students import for the self-attention and pretraining course.

Model, data, trainer, evaluation and the named runs. The graded parts (span
corruption, the synthesizer's forward, the training glue) are not here: students
write them in their notebooks.
"""
import sys

__version__ = "0.1.0"

# nbformat validates notebooks with jsonschema, whose optional "iri" format support (rfc3987_syntax)
# builds a grammar for ~2 s at import, in every process that loads a notebook (kernels, runs, the
# grader's jobs); no notebook schema uses that format, so jsonschema goes without it
sys.modules.setdefault("rfc3987_syntax", None)
