"""nbgrader for the instructor on the hub: the course folder, the course and its exchange (set by
hub/jupyterhub_config.py). nbgrader then reads the course folder's own nbgrader_config.py on top of this one."""
import os

c = get_config()  # noqa: F821 (provided by nbgrader)

# the course folder tools/hub_setup.sh made in the instructor's home: formgrader, collect and feedback work there
c.CourseDirectory.root = os.environ.get("COURSE_ROOT", os.path.expanduser("~/attention-course"))
# the course id the exchange files releases and submissions under (the course folder's config says the same)
c.CourseDirectory.course_id = os.environ.get("COURSE_ID", "attention-course")
# the exchange every user of the hub shares (tools/hub_setup.sh makes it, mode 1777 like /tmp)
c.Exchange.root = os.environ.get("COURSE_EXCHANGE", "/srv/nbgrader/exchange")
