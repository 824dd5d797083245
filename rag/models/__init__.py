"""The model seam: the embedder and the chat model (OpenAI API, or the bundled GGUF served on 127.0.0.1)."""
