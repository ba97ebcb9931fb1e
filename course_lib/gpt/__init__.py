"""A minGPT-style character model and its training; nothing in here knows notebooks, checks or grading.

``model`` and ``attention`` (with ``dropout``) are the network, ``attention_math`` the float64 attention of the
written parts' numeric twins, ``datasets`` and ``vocab`` the data, ``trainer`` (with ``device`` and
``checkpoint``) the training loop, ``evaluation``, ``sampling`` and ``recall`` what a trained model answers.
"""
