"""The report's HTML page (`html`) and compare's page (`compare_page`): static inline SVG, no
script, nothing fetched, dataset text escaped (jinja2 templates in report_templates/, compiled
once per user). Each is imported from its module: a node run draws no comparison, whose model
is costly to import."""
