"""course_lib: what students import for the self-attention and pretraining course.

Model, data, trainer, evaluation and the named runs. The graded parts (span
corruption, the synthesizer's forward, the training glue) are not here: students
write them in their notebooks.
"""
import sys

__version__ = "0.1.0"

# jsonschema's "iri" format checker (rfc3987_syntax) builds a slow grammar at import, and no
# notebook schema uses that format: no process that loads a notebook (via nbformat) imports it
sys.modules.setdefault("rfc3987_syntax", None)
