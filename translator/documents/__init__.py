"""Documents translated with their structure: text paragraphs, Markdown, HTML and docx
(docs/documents.md)."""
