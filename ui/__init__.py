"""PaperChat's Gradio front end: a thin layer over `rag`."""
