"""`personasim view`: a self-contained HTML page per run (`viewer`, with its page's script and
styles in `viewer_assets/`), the compare view's numbers (`viewer_compare`), the run list of a
sweep or folder (`viewer_list`) and the loopback server of `--serve` (`viewer_server`)."""
