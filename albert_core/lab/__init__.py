"""The pretraining lab: train BERT/ALBERT twins on a real corpus with real tokenizers (torch; no streamlit).

Data: `albert_core.text.corpus.load_corpus` (CPython's documentation cleaned to prose, and the World English
Bible; split by document), `albert_core.text.tokenizers.lab_tokenizer` (Unigram for ALBERT, WordPiece for
BERT, trained with `tokenizers`), `examples.PretrainingData` (MLM + NSP/SOP examples as BERT's and ALBERT's
create_pretraining_data).
"""
