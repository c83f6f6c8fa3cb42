"""Demo data: files beside the code that loads them."""
