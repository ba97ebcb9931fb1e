"""The feedback pages' accessibility changes made without BeautifulSoup: the page a browser reads is nbconvert's."""
from __future__ import annotations

import bs4
import nbformat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.nbgrader_glue import page_templates
from autograder.nbgrader_glue.feedback import BoundedHTMLExporter
from autograder.nbgrader_glue.feedback_warmup import RESOURCES
from autograder.nbgrader_glue.page_access import MISSING_ALT, accessible

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="


def _nbconvert_pass(page: str) -> str:
    """nbconvert 7's own pass (HTMLExporter.from_notebook_node), as it is written there."""
    soup = bs4.BeautifulSoup(page, features="html.parser")
    for elem in soup.select("img:not([alt])"):
        elem.attrs["alt"] = MISSING_ALT
    for elem in soup.select(".jp-Notebook div.jp-Cell-inputWrapper"):
        elem.attrs["tabindex"] = "0"
    for elem in soup.select(".jp-Notebook div.jp-OutputArea-output"):
        elem.attrs["tabindex"] = "0"
    return str(soup)


def _read(page: str) -> tuple[list, str]:
    """What a parser makes of ``page``: each element's name and attributes (in any order), and the text, its runs of
    white space one space as a browser shows them outside <pre> (a stray end tag, which BeautifulSoup drops and a
    browser ignores, splits no text in two here; and BeautifulSoup's own writing of a page moves white space: it
    writes "\r\n</div>\n" as "\n\n", which it then reads as one "\n")."""
    soup = bs4.BeautifulSoup(page, features="html.parser")
    elements = [(tag.name, sorted((k, v if isinstance(v, str) else " ".join(v)) for k, v in tag.attrs.items()))
                for tag in soup.find_all(True)]
    return elements, " ".join(soup.get_text().split())


ATTRIBUTE = st.sampled_from(['src="a.png"', "src=b", 'alt=""', 'alt="x"', 'title="a>b"', "title='<img src=q>'",
                             'class="jp-Cell-inputWrapper"', 'class="x jp-OutputArea-output y"', "tabindex=3",
                             "class=jp-Notebook", "hidden", 'data-x="&quot;&amp;"', "ALT=up"])
TAG = st.builds(lambda name, attrs, close, sep: f"<{name}{''.join(' ' + a for a in attrs)}{sep}{close}",
                st.sampled_from(["img", "IMG", "div", "Div", "p", "span", "body", "main"]),
                st.lists(ATTRIBUTE, max_size=4), st.sampled_from([">", "/>", " />"]), st.sampled_from(["", "\n"]))
PIECE = st.one_of(TAG, st.sampled_from(["</div>", "</p>", "text", "\n", "a < b", "&lt;img src=x&gt;",
                                        "<!-- <img src=c> -->", "<script>var s = '<img src=d>';</script>",
                                        "<style>img{border:0}</style>", "<br>", "\r\n", "<img/src=e>"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECE, max_size=25))
def test_any_page_reads_as_nbconverts_pass_makes_it(pieces):
    """Whatever tags, attributes, scripts and comments a page holds, does a parser read the same elements, attributes
    and text from our page as from nbconvert's BeautifulSoup pass over it?"""
    page = "".join(pieces)
    assert _read(accessible(page)[0]) == _read(_nbconvert_pass(page))


def test_everything_outside_the_changed_tags_keeps_the_templates_bytes():
    """Is only the image's start tag changed, and the count of images without alt text the one nbconvert warns of?"""
    page = '<p>&nbsp;a<br>b</p>\n<img src="x.png">\n<img alt="" src="y.png">\n<script>"<img>"</script>'
    made, missing = accessible(page)
    assert missing == 1
    assert made == page.replace('<img src="x.png">', f'<img alt="{MISSING_ALT}" src="x.png">')


def test_a_feedback_page_with_a_plot_is_nbconverts_page():
    """Does a feedback page made in a unit's exporter (a plot without alt text, markdown, code, an error) read as
    the page nbconvert's own pass makes, with the plot given its alt text?"""
    nb = page_templates.warm_page()
    nb.cells.append(nbformat.v4.new_code_cell("plot()", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})]))
    resources = {k: dict(v) for k, v in RESOURCES.items()}
    ours = BoundedHTMLExporter(config=page_templates.feedback_config(), in_unit=True)
    made = ours.from_notebook_node(nb, {k: dict(v) for k, v in resources.items()})[0]
    theirs = BoundedHTMLExporter(config=page_templates.feedback_config())  # not in a unit: nbconvert's own pass
    reference = theirs.from_notebook_node(nb, {k: dict(v) for k, v in resources.items()})[0]
    assert f'alt="{MISSING_ALT}"' in made and "data:image/png;base64," in made
    assert _read(made) == _read(reference)


def test_the_lab_template_gets_its_cells_made_focusable():
    """With nbconvert's lab template (body of class jp-Notebook), are the cells' input and output areas given
    tabindex 0 as nbconvert's pass gives them?"""
    from nbconvert.exporters import HTMLExporter

    nb = page_templates.warm_page()
    plain = HTMLExporter(template_name="lab")
    html = plain.from_notebook_node(nb)[0]  # nbconvert's pass already made: its tabindex are taken out again
    page = html.replace(' tabindex="0"', "")
    made = accessible(page)[0]
    assert made.count('tabindex="0"') == html.count('tabindex="0"') > 0
    assert _read(made) == _read(_nbconvert_pass(page))
