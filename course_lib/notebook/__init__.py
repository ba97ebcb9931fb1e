"""What the notebooks' given cells call; nothing in here is graded or grades.

``env`` is the notebooks' setting (data, preset, outputs, runs trained or loaded), ``run_cells`` the run cells
of 02, 04 and 05, ``plots``, ``widgets`` and ``tour`` the pictures and explorations (``plots_off`` the switch that
turns the plots off where nobody sees them), ``not_written`` and ``check_failed`` how a stub and a failed check show
in Jupyter.
"""
