"""A student's Jupyter server on the hub: `make student`'s (student_jupyter/, later on JUPYTER_CONFIG_PATH) plus
the Assignments tab. hub/jupyterhub_config.py puts this folder first on JUPYTER_CONFIG_PATH: it wins where they differ.
"""
c = get_config()  # noqa: F821 (provided by Jupyter)

# student_jupyter/ turns nbgrader's exchange tools off (a student on a laptop has no exchange); on the hub they are
# how a student fetches, submits and fetches feedback. update(): formgrader and the course list stay off, as there.
c.ServerApp.jpserver_extensions.update({"nbgrader.server_extensions.assignment_list": True})
