"""What each option does: a sweep's factors as columns, their effects from one split-plot
model, and the best configuration of each swept job."""
