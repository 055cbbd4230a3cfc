"""Text the models read, shipped with the package: the corpus (corpus), the family tokenizers trained on it
(tokenizers), encoding a visitor's text for a live model (encoding), and the paper's pre-training inputs,
sentence pairs for SOP/NSP and n-gram masks (pretraining_inputs), which the lab trains with and the Paper page
shows."""
