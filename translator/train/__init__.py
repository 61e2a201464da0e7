"""Training: the loop, its updates, schedules, checkpoints on disk, resume and fine-tuning."""
