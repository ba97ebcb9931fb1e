"""course_lib: what students import for the self-attention and pretraining course.

Model, data, trainer, evaluation and the named runs. The graded parts (span
corruption, the synthesizer's forward, the training glue) are not here: students
write them in their notebooks.
"""
__version__ = "0.1.0"
