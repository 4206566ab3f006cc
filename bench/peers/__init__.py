"""Scripts run as whole processes by the harness: the peers (in their own venv) and the parse floors."""
