"""`--workers N`: a round's fresh decisions in N worker processes. The driver's side
(`decision_workers`), the worker process (`decision_worker`) and the frames between them over a
pipe (`worker_frames`)."""
