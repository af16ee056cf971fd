"""What a person sees of a submission: nothing a student wrote or printed may run script there.

The instructor and the TAs look at student notebooks in nbgrader's formgrader (hand grading),
students and instructors open the feedback HTML, and JupyterLab opens the autograded
notebooks. Each of these is a page on a trusted origin or a file a person trusts, so a
student's ``<img onerror=…>`` in a markdown answer would run with the viewer's session. Three
layers, each enough on its own against what it covers:

* :mod:`~autograder.viewing.notebook` cleans the autograded notebook when it is written
  (markdown, outputs, attachments, notebook metadata), and records what it removed;
* :mod:`~autograder.viewing.exporter` makes nbconvert's HTML (the formgrader's pages and the
  feedback) sanitize every markdown cell and output with the same policy;
* :mod:`~autograder.viewing.feedback` keeps the feedback folder to the pages a student should
  see and gives each page a Content-Security-Policy; :mod:`~autograder.viewing.formgrader` (a
  Jupyter Server extension) gives the formgrader's submission pages a policy that only lets
  the formgrader's own scripts run, and serves files handed in beside the notebooks sandboxed.

:mod:`~autograder.viewing.structure` cuts a notebook to nbformat 4.5's allow-list before any
of it is rendered (unknown cells, outputs, fields and metadata that templates print raw);
:mod:`~autograder.viewing.urls` reads a URL as a browser does before the policy keeps it;
:mod:`~autograder.viewing.pages` guards every other formgrader route (safe URL parts, escaped
templates, a policy on every response); :mod:`~autograder.viewing.names` is the one rule for
student ids and file names, on every route in.

:mod:`~autograder.viewing.policy` is the one allow-list all of them use (nh3, the Python
binding of the Rust sanitizer ammonia). The bottom layer of ``autograder``: it knows nothing
of grading.
"""
