"""The switch that turns the course's plots off, in a module light enough for a kernel's launcher to import.

``plots`` reads it; the score of record's probe job (``autograder.grading.code_parts``) and nbgrader's autograde
kernels (``autograder.nbgrader_glue.zygote``) set it, where nobody sees a figure.
"""
OFF = ("COURSE_PLOTS", "off")  # the environment variable, and the value, that turn every plot off
OFF_ENV = dict([OFF])  # the same, as an environment to add
